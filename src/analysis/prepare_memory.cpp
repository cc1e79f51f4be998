// Preparing runs in three phases (runtime/runner/): every initializer gets a home (a
// copy when it cannot be read where it lies, and its mapped pages go back to the OS), the
// constant nodes run in order with each computed intermediate released after its last constant
// reader (and so is a weight only constant nodes read, copied or mapped), then every step's
// kernel is prepared in order, and an original that only packed copies read is released once
// its last reader has packed it. The peak of the buffers follows from replaying those events
// with the program's bytes.
#include "footprint/analysis/prepare_memory.hpp"

#include <vector>

#include "footprint/graph/node_runner.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/tensor_data.hpp"

namespace footprint::analysis {
namespace {

// A Constant node whose stored tensor the runtime reads where it lies allocates nothing.
bool read_in_model(const graph::Graph& g, const graph::Node& n) {
  if (n.outputs.empty() || n.outputs[0] == graph::kNoValue || !g.is_stored_value(n.outputs[0])) {
    return false;
  }
  const onnx::TensorProto* t = g.constant_tensor(n.outputs[0]);
  return t != nullptr &&
         onnx::readable_in_place(*t, onnx::element_alignment(onnx::tensor_dtype(*t)));
}

class Replay {
 public:
  Replay(const graph::Graph& g, const GraphProgram& p, const Timeline& t)
      : g_(g), p_(p), storage_(t.storage), heap_(g.values().size(), 0) {}

  PrepareMemory run() {
    place_weights();
    evaluate_constants();
    prepare_steps();
    out_.peak_bytes = tally_.peak;
    out_.kept_bytes = tally_.now;
    return out_;
  }

 private:
  size_t root(graph::ValueId v) const { return static_cast<size_t>(storage_[v]); }

  void hold(size_t r, uint64_t bytes) {
    heap_[r] = bytes;
    tally_.add(bytes);
  }

  void release(size_t r) {
    tally_.drop(heap_[r]);
    heap_[r] = 0;
  }

  void place_weights() {
    for (graph::ValueId v = 0; v < static_cast<graph::ValueId>(g_.values().size()); ++v) {
      const graph::Value& value = g_.value(v);
      if (root(v) != static_cast<size_t>(v) || value.kind != graph::ValueKind::initializer ||
          value.initializer == nullptr ||
          onnx::readable_in_place(*value.initializer, onnx::element_alignment(value.dtype))) {
        continue;
      }
      const uint64_t bytes = onnx::tensor_storage_bytes(*value.initializer);
      out_.copied_weights_bytes += bytes;
      hold(static_cast<size_t>(v), bytes);
    }
  }

  void evaluate_constants() {
    const size_t nv = g_.values().size();
    std::vector<char> is_step(g_.nodes().size(), 0);
    for (const graph::NodeId id : p_.step_nodes) is_step[static_cast<size_t>(id)] = 1;
    std::vector<graph::NodeId> constants;
    std::vector<int> last_use(nv, -1);
    for (const graph::NodeId id : p_.order) {
      if (is_step[static_cast<size_t>(id)]) continue;
      for (const graph::ValueId v : g_.node(id).inputs) {
        if (v != graph::kNoValue) last_use[root(v)] = static_cast<int>(constants.size());
      }
      constants.push_back(id);
    }
    for (size_t k = 0; k < constants.size(); ++k) {
      const graph::Node& n = g_.node(constants[k]);
      if (!read_in_model(g_, n)) {
        for (const graph::ValueId o : n.outputs) {
          if (o == graph::kNoValue || root(o) != static_cast<size_t>(o)) continue;
          const uint64_t bytes = p_.program.tensors[o].bytes;
          out_.constants_bytes += bytes;
          hold(static_cast<size_t>(o), bytes);
        }
      }
      for (const graph::ValueId v : n.inputs) {
        if (v == graph::kNoValue) continue;
        const size_t r = root(v);
        if (last_use[r] == static_cast<int>(k) && p_.program.tensors[r].prepare_only) release(r);
      }
    }
  }

  void prepare_steps() {
    const size_t nv = g_.values().size();
    std::vector<int> left(nv, 0);
    std::vector<char> kept(nv, 0);
    for (const graph::ValueId v : g_.outputs()) kept[root(v)] = 1;
    for (const graph::NodeId id : p_.step_nodes) {
      const graph::Node& n = g_.node(id);
      for (const graph::ValueId v : n.implicit_inputs) kept[root(v)] = 1;
      for (const graph::ValueId v : n.inputs) {
        if (v != graph::kNoValue) ++left[root(v)];
      }
    }
    for (size_t s = 0; s < p_.step_nodes.size(); ++s) {
      const graph::Node& n = g_.node(p_.step_nodes[s]);
      const uint64_t packed = s < p_.step_packed.size() ? p_.step_packed[s] : 0;
      out_.packed_bytes += packed;
      tally_.add(packed);
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const graph::ValueId v = n.inputs[i];
        if (v == graph::kNoValue) continue;
        const size_t r = root(v);
        const bool constant = p_.program.tensors[v].category == Category::weights;
        if (!graph::replaced_by_packing(n.schema, i, packed, constant)) kept[r] = 1;
        if (--left[r] > 0 || kept[r]) continue;
        release(r);
      }
    }
  }

  const graph::Graph& g_;
  const GraphProgram& p_;
  const std::vector<int>& storage_;
  std::vector<uint64_t> heap_;  // per root: what it holds on the heap now
  HeapTally tally_;
  PrepareMemory out_;
};

}  // namespace

PrepareMemory predict_prepare(const graph::Graph& g, const GraphProgram& p, const Timeline& t) {
  return Replay(g, p, t).run();
}

}  // namespace footprint::analysis
