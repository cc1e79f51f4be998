#include "footprint/graph/bind_inputs.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "footprint/core/error.hpp"

namespace footprint::graph {

namespace {

// The given shape of `input`, checked against its declaration; its named dims join `bound`.
std::vector<int64_t> given_shape(const Value& input, const std::vector<int64_t>& given,
                                 const DimBindings& dims, DimBindings& bound) {
  const Shape& declared = input.shape;
  const std::string what = "--shape " + input.name;
  if (declared.ranked && declared.rank() != given.size()) {
    throw UsageError(what + ": the input has rank " + std::to_string(declared.rank()) + " (" +
                     declared.to_string() + "), the shape " + std::to_string(given.size()));
  }
  for (size_t i = 0; i < given.size(); ++i) {
    if (given[i] < 0) throw UsageError(what + ": extent " + std::to_string(given[i]));
    if (!declared.ranked) continue;
    const Dim& d = declared.dims[i];
    if (const auto v = d.value(); v && *v != given[i]) {
      throw UsageError(what + ": dim " + std::to_string(i) + " is declared " + std::to_string(*v) +
                       ", not " + std::to_string(given[i]));
    }
    if (d.is_known() || d.is_unknown()) continue;
    std::vector<std::string> symbols;
    d.collect_symbols(symbols);
    if (symbols.size() != 1 || d.to_string() != symbols[0])
      continue;  // an expression: checked later
    const std::string& name = symbols[0];
    for (const DimBindings* b : {&dims, static_cast<const DimBindings*>(&bound)}) {
      const auto it = b->find(name);
      if (it != b->end() && it->second != given[i]) {
        throw UsageError(std::string(what)
                             .append(": dim ")
                             .append(name)
                             .append(" is ")
                             .append(std::to_string(given[i]))
                             .append(" here and ")
                             .append(std::to_string(it->second))
                             .append(" elsewhere"));
      }
    }
    bound[name] = given[i];
  }
  return given;
}

}  // namespace

bool bind_input_extents(Graph& g, const DimBindings& dims, std::vector<std::string>& defaulted,
                        const InputShapes& shapes) {
  for (const auto& [name, extents] : shapes) {
    const auto id = g.find(name);
    if (!id || std::find(g.inputs().begin(), g.inputs().end(), *id) == g.inputs().end()) {
      throw UsageError("--shape " + name + ": the graph has no input of that name");
    }
  }
  // Dims the given shapes bind hold for every input.
  DimBindings with_shapes = dims;
  std::vector<std::optional<std::vector<int64_t>>> given(g.inputs().size());
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value& input = g.value(g.inputs()[i]);
    if (const auto it = shapes.find(input.name); it != shapes.end()) {
      DimBindings bound;
      given[i] = given_shape(input, it->second, dims, bound);
      with_shapes.insert(bound.begin(), bound.end());
    }
  }
  std::vector<std::vector<int64_t>> extents;
  extents.reserve(g.inputs().size());
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const ValueId id = g.inputs()[i];
    if (given[i]) {
      extents.push_back(*given[i]);
      continue;
    }
    const Shape& declared = g.value(id).shape;
    if (!declared.ranked) return false;
    std::vector<int64_t>& e = extents.emplace_back();
    for (const Dim& d : declared.dims) {
      if (d.is_unknown()) return false;
      std::vector<std::string> symbols;
      d.collect_symbols(symbols);
      DimBindings local;
      for (const std::string& s : symbols) {
        const auto it = with_shapes.find(s);
        if (it != with_shapes.end()) {
          local[s] = it->second;
          continue;
        }
        local[s] = 1;
        if (std::find(defaulted.begin(), defaulted.end(), s) == defaulted.end())
          defaulted.push_back(s);
      }
      const auto v = d.evaluate(local);
      if (!v || *v < 0) {
        throw Error("input " + in_quotes(g.value(id).name) + ": dim " + d.to_string() + " is " +
                    (v ? std::to_string(*v) : "undefined") + " under the bound dims");
      }
      e.push_back(*v);
    }
  }
  for (size_t i = 0; i < extents.size(); ++i) {
    g.mutable_value(g.inputs()[i]).shape = Shape::of(extents[i]);
  }
  return true;
}

}  // namespace footprint::graph
