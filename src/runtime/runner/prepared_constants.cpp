#include "prepared_constants.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>

#include "footprint/core/error.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/model_source.hpp"
#include "graph_error.hpp"
#include "step_context.hpp"
#include "tensor_bytes.hpp"

namespace footprint::runtime::runner {
namespace {

using analysis::Category;

// A known value's elements as `dtype` into `out` (`bytes` long); false for a dtype it does not
// hold or a size that differs.
bool write_known(const graph::KnownValue& known, DType dtype, std::byte* out, size_t bytes) {
  const size_t n = known.numel();
  auto fill = [&]<class T>(T /*tag*/) {
    if (bytes != n * sizeof(T)) return false;
    for (size_t i = 0; i < n; ++i) {
      T x{};
      if (!known.ints.empty()) {  // exact, past 2^53 too
        const auto v = known.ints[i].value();
        if (!v) return false;
        x = static_cast<T>(*v);
      } else {
        x = static_cast<T>(known.reals[i]);
      }
      std::memcpy(out + i * sizeof(T), &x, sizeof(T));
    }
    return true;
  };
  switch (dtype) {
    case DType::int64:
      return fill(int64_t{});
    case DType::int32:
      return fill(int32_t{});
    case DType::boolean:
      return fill(bool{});
    case DType::float32:
      return fill(float{});
    case DType::float64:
      return fill(double{});
    default:
      return false;
  }
}

}  // namespace

PreparedConstants::PreparedConstants(const graph::Graph& g, const analysis::GraphProgram& program,
                                     const analysis::Timeline& timeline,
                                     const BoundedExtents& extents, const Placement& placement,
                                     Weights weights, graph::SubgraphRunner* subgraphs, int threads,
                                     std::vector<void*>& pointers)
    : g_(g),
      program_(program),
      timeline_(timeline),
      extents_(extents),
      placement_(placement),
      subgraphs_(subgraphs),
      threads_(threads),
      order_(analysis::prepare_order(g, program, timeline.storage)),
      readers_(g, program, timeline.storage),
      evaluated_(order_.constants.size(), 0),
      weights_(std::move(weights.slots)),
      released_mapped_bytes_(weights.released_mapped_bytes) {
  heap_.add(weights.copied_bytes);
  const size_t nv = g_.values().size();
  constants_.resize(nv);
  constant_data_.assign(nv, nullptr);
  pointers.assign(nv, nullptr);
  point_preparing(pointers);
}

void PreparedConstants::point_preparing(std::span<void*> pointers) const {
  HomeBytes preparing;  // nothing but the constants has bytes yet
  preparing.weights = weights_;
  preparing.constants = constant_data_;
  placement_.point(preparing, pointers);
}

// Each input goes right after its last reader if no one needs it itself, so preparing peaks at
// the kept constants plus what one node has in flight.
void PreparedConstants::evaluate(size_t k, std::vector<void*>& pointers) {
  if (evaluated_[k] != 0) return;
  evaluated_[k] = 1;
  const graph::NodeId id = order_.constants[k];
  evaluate_constant(id, pointers);
  readers_.constant_read(g_.node(id), [this](size_t r) { release_root(r); });
}

void PreparedConstants::evaluate_all(std::vector<void*>& pointers) {
  for (size_t k = 0; k < order_.constants.size(); ++k) evaluate(k, pointers);
  point_preparing(pointers);
}

void PreparedConstants::evaluate_constant(graph::NodeId id, std::span<void*> pointers) {
  const graph::Node& n = g_.node(id);
  for (auto o : n.outputs) {
    if (o == graph::kNoValue || timeline_.storage[o] != o) continue;
    if (!extents_.known(o))
      fail(g_, "constant " + in_quotes(g_.value(o).name) + " has unknown extents");
    if (const std::byte* in_model = constant_in_model(n); in_model != nullptr) {
      constant_data_[o] = in_model;
      continue;
    }
    constants_[o] =
        allocate(o, "constant " + in_quotes(g_.value(o).name) + " of node " + n.label(id));
    constant_data_[o] = constants_[o].data();
    heap_.add(constants_[o].size());
    constant_bytes_ += constants_[o].size();
  }
  if (computed_from_run(n)) {
    // Inference knows the value although an input is computed when running (an extent of
    // Shape(x) that does not depend on x's data-dependent ones): its elements are the constant.
    for (auto o : n.outputs) {
      if (o == graph::kNoValue || timeline_.storage[o] != o) continue;
      const std::optional<graph::KnownValue>& known = g_.value(o).known;
      if (!known || !known->is_concrete() ||
          !write_known(*known, g_.value(o).dtype, constants_[o].data(), constants_[o].size())) {
        fail(g_, "constant " + in_quotes(g_.value(o).name) + " of node " + n.label(id) +
                     " reads a value computed when running");
      }
    }
    return;
  }
  point_preparing(pointers);
  auto ctx = make_context(g_, id, extents_, subgraphs_);
  point_context(*ctx, pointers);
  const graph::OpSchema* schema = n.schema;
  if (constant_in_model(n) != nullptr) return;
  if (schema != nullptr && schema->output_view_of >= 0 &&
      ctx->outputs[0].data == ctx->inputs[static_cast<size_t>(schema->output_view_of)].data)
    return;
  if (schema == nullptr || schema->kernel == nullptr) {
    throw Error("node " + n.label(id) + ": no kernel to evaluate this constant with");
  }
  // The same evaluation the graph builder's value propagation and `footprint fold` use: a heap
  // workspace and the prepare hook's state for this one call.
  ctx->thread_count = threads_;
  graph::evaluate(*ctx);
}

bool PreparedConstants::computed_from_run(const graph::Node& n) const {
  return std::any_of(n.inputs.begin(), n.inputs.end(), [&](graph::ValueId v) {
    return v != graph::kNoValue &&
           program_.program.tensors[timeline_.storage[v]].category != Category::weights;
  });
}

AlignedBuffer PreparedConstants::allocate(graph::ValueId v, const std::string& what) const {
  const size_t bytes = bytes_of(g_.value(v).dtype, extents_.planned(v));
  try {
    return AlignedBuffer(bytes);
  } catch (const std::bad_alloc&) {
    throw Error(what + ": out of memory allocating " + std::to_string(bytes) + " bytes");
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
}

// A Constant node whose tensor is stored raw and suitably aligned is read where it lies.
const std::byte* PreparedConstants::constant_in_model(const graph::Node& n) const {
  if (n.outputs.empty() || n.outputs[0] == graph::kNoValue || !g_.is_stored_value(n.outputs[0]))
    return nullptr;
  const onnx::TensorProto* t = g_.constant_tensor(n.outputs[0]);
  if (t == nullptr) return nullptr;
  if (!onnx::readable_in_place(*t, onnx::element_alignment(onnx::tensor_dtype(*t)))) {
    return nullptr;
  }
  return onnx::tensor_view(*t).data();
}

void PreparedConstants::release_replaced(const graph::Node& n,
                                         const std::function<bool(size_t)>& replaced) {
  readers_.step_read(n, replaced, [this](size_t r) { release_root(r); });
}

void PreparedConstants::release_root(size_t r) {
  if (constants_[r].size() > 0) {
    heap_.drop(constants_[r].size());
    released_bytes_ += constants_[r].size();
    constant_bytes_ -= constants_[r].size();
    constants_[r] = AlignedBuffer();
    constant_data_[r] = nullptr;
    return;
  }
  if (placement_[r].home != Home::weight) return;
  // An initializer: a copy made for alignment is freed; one read in place from a mapped model
  // gives its pages back to the OS (read from the file again if anything touched them).
  onnx::TensorBytes& w = weights_[static_cast<size_t>(placement_[r].index)];
  if (!w.is_view()) {
    if (w.size() == 0) return;
    heap_.drop(w.size());
    released_bytes_ += w.size();
    w = onnx::TensorBytes();
    return;
  }
  if (g_.model() != nullptr)
    released_mapped_bytes_ += g_.model()->source().release_pages(w.bytes());
}

uint64_t PreparedConstants::mapped_weight_bytes() const {
  uint64_t total = 0;
  for (const onnx::TensorBytes& w : weights_) total += w.is_view() ? w.size() : 0;
  // Constant nodes read where they lie in the model (constant_in_model).
  for (size_t v = 0; v < constant_data_.size(); ++v) {
    if (constant_data_[v] != nullptr && constants_[v].size() == 0) {
      total += bytes_of(g_.value(static_cast<graph::ValueId>(v)).dtype,
                        extents_.planned(static_cast<graph::ValueId>(v)));
    }
  }
  return total;
}

}  // namespace footprint::runtime::runner
