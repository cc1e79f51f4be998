// Preparing (runtime/runner/): every initializer gets a home (a copy when it cannot be read where
// it lies, and its mapped pages go back to the OS), then the constant nodes run in order with
// each step's kernel prepared as soon as the constants it reads are computed (PrepareOrder); a
// constant goes once every reader is done and none needs it itself (PrepareReaders): an
// intermediate after its last constant reader, an original that only packed copies read once
// its last reader has packed it. The peak of the buffers follows from replaying those events
// with the program's bytes.
#include "footprint/analysis/prepare_memory.hpp"

#include <vector>

#include "footprint/analysis/prepare_order.hpp"
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
    const PrepareOrder order = prepare_order(g_, p_, storage_);
    PrepareReaders readers(g_, p_, storage_);
    const auto release = [this](size_t r) { drop(r); };
    for (const PrepareOrder::Event& e : order.events) {
      if (e.is_step) {
        prepare_step(e.index, readers);
      } else {
        const graph::Node& n = g_.node(order.constants[e.index]);
        evaluate_constant(n);
        readers.constant_read(n, release);
      }
    }
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

  void drop(size_t r) {
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

  void evaluate_constant(const graph::Node& n) {
    if (read_in_model(g_, n)) return;
    for (const graph::ValueId o : n.outputs) {
      if (o == graph::kNoValue || root(o) != static_cast<size_t>(o)) continue;
      const uint64_t bytes = p_.program.tensors[o].bytes;
      out_.constants_bytes += bytes;
      hold(static_cast<size_t>(o), bytes);
    }
  }

  void prepare_step(size_t s, PrepareReaders& readers) {
    const graph::Node& n = g_.node(p_.step_nodes[s]);
    const uint64_t packed = s < p_.step_packed.size() ? p_.step_packed[s] : 0;
    out_.packed_bytes += packed;
    tally_.add(packed);
    const auto replaced = [&](size_t i) {
      const bool constant = p_.program.tensors[n.inputs[i]].category == Category::weights;
      return graph::replaced_by_packing(n.schema, i, packed, constant);
    };
    readers.step_read(n, replaced, [this](size_t r) { drop(r); });
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
