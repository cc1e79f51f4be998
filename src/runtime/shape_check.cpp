#include "footprint/runtime/shape_check.hpp"

#include <unordered_map>

#include "footprint/core/error.hpp"

namespace footprint::runtime {
namespace {

std::string described(DType dtype, const std::string& extents, uint64_t bytes) {
  return std::string(dtype_name(dtype)) + extents + " (" + std::to_string(bytes) + " B)";
}

}  // namespace

ShapeCheck check_shapes(const analysis::ModelProgram& predicted, const Session& session) {
  ShapeCheck out;
  std::unordered_map<std::string, const Session::ValueExtents*> ran;
  const std::vector<Session::ValueExtents> values = session.prepared_values();
  for (const Session::ValueExtents& v : values) ran.emplace(v.name, &v);
  const graph::Graph& g = predicted.graph;
  DimBindings dims = predicted.options.dims;
  for (const std::string& d : predicted.program.unbound_dims) dims.emplace(d, 1);  // as analysed
  for (graph::ValueId id = 0; id < static_cast<graph::ValueId>(g.values().size()); ++id) {
    const graph::Value& v = g.value(id);
    const uint64_t bytes = predicted.program.program.tensors[id].bytes;
    const auto it = ran.find(v.name);
    if (it == ran.end()) {
      out.difference = "value " + in_quotes(v.name) + " is predicted but the run has no such value";
      return out;
    }
    const Session::ValueExtents& r = *it->second;
    ran.erase(it);
    // A data-dependent extent is predicted, planned and prepared at its bound; what a run made
    // of it must lie within.
    std::vector<int64_t> extents;
    bool concrete = v.shape.ranked;
    bool bounded = false;
    for (const Dim& d : v.shape.dims) {
      const auto range = d.range(dims);
      bounded = bounded || d.is_data_dependent();
      concrete = concrete && range && (range->first == range->second || d.is_data_dependent());
      extents.push_back(range ? range->second : -1);
    }
    bool within = r.ran.size() == r.extents.size();
    for (size_t k = 0; within && k < r.ran.size(); ++k) within = r.ran[k] <= r.extents[k];
    ++out.values;
    if (bounded != r.bounded || !within) {
      out.difference = "value " + in_quotes(v.name) + ": predicted " + v.shape.to_string() +
                       ", planned " + extents_text(r.extents) + ", ran " + extents_text(r.ran);
      return out;
    }
    if (!concrete || v.dtype != r.dtype || extents != r.extents || bytes != r.bytes) {
      const std::string shape = v.shape.ranked ? v.shape.to_string() : "[?]";
      std::string bound;  // the extents a symbolic shape took, or why it has none
      if (!concrete) {
        bound = " (not concrete)";
      } else if (shape != extents_text(extents)) {
        bound = " = " + extents_text(extents);
      }
      out.difference = "value " + in_quotes(v.name) + ": predicted " +
                       described(v.dtype, shape, bytes) + bound + ", ran " +
                       described(r.dtype, extents_text(r.extents), r.bytes);
      return out;
    }
  }
  if (!ran.empty()) {
    out.difference = "value " + in_quotes(ran.begin()->first) + " ran but is not predicted";
  }
  return out;
}

}  // namespace footprint::runtime
