// Control flow: If, Loop and Scan infer their subgraphs (through the pass's SubgraphInferrer,
// with the enclosing graphs' values visible) and derive their outputs from the subgraphs'.
//
// If merges its branches: dims equal in both stay, others are known only when running, at most
// the larger; a known condition picks one branch. Loop passes the carried values' types into the
// body and, where the body changes a carried shape, infers it again with the differing dims
// unknown. Scan outputs gain the sequence axis.
#include <algorithm>
#include <string>

#include "families.hpp"
#include "footprint/graph/graph.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// The type that holds both `a` and `b`: equal dims stay, others become unknown.
TensorType merge(const TensorType& a, const TensorType& b) {
  TensorType out;
  out.dtype = a.dtype != DType::undefined ? a.dtype : b.dtype;
  if (!a.shape.ranked || !b.shape.ranked || a.shape.rank() != b.shape.rank()) return out;
  out.shape = a.shape;
  for (size_t i = 0; i < a.shape.rank(); ++i) {
    if (!(a.shape.dims[i] == b.shape.dims[i])) out.shape.dims[i] = Dim::unknown();
  }
  return out;
}

bool same_type(const TensorType& a, const TensorType& b) {
  return a.dtype == b.dtype && a.shape.ranked == b.shape.ranked &&
         a.shape.to_string() == b.shape.to_string();
}

std::optional<bool> single_condition(const std::optional<std::vector<int64_t>>& c) {
  if (!c || c->size() != 1) return std::nullopt;
  return (*c)[0] != 0;
}

// A known condition runs one branch, and only that one is inferred: the other may be wrong for
// these shapes (the exporter's `If(dim == 1) then Squeeze else Identity`).
void infer_if(const InferContext& ctx, InferResult& r) {
  const size_t n = ctx.output_count();
  if (const std::optional<bool> cond = single_condition(ctx.input_ints(0))) {
    const char* name = *cond ? "then_branch" : "else_branch";
    const SubgraphResult taken = ctx.infer_subgraph(name, {});
    if (taken.outputs.size() != n) {
      ctx.fail(std::string(name) + " has " + std::to_string(taken.outputs.size()) +
               " outputs, the node " + std::to_string(n));
    }
    for (size_t i = 0; i < n; ++i) {
      set_output(r, i, taken.outputs[i].dtype, taken.outputs[i].shape);
      if (taken.values[i]) set_value(r, i, *taken.values[i]);
    }
    return;
  }
  const SubgraphResult then_r = ctx.infer_subgraph("then_branch", {});
  const SubgraphResult else_r = ctx.infer_subgraph("else_branch", {});
  if (then_r.outputs.size() != n || else_r.outputs.size() != n) {
    ctx.fail("the branches have " + std::to_string(then_r.outputs.size()) + " and " +
             std::to_string(else_r.outputs.size()) + " outputs, the node " + std::to_string(n));
  }
  for (size_t i = 0; i < n; ++i) {
    TensorType t = merge(then_r.outputs[i], else_r.outputs[i]);
    // Which branch runs depends on the data: a dim the branches disagree on is at most the larger.
    const Shape& a = then_r.outputs[i].shape;
    const Shape& b = else_r.outputs[i].shape;
    for (size_t k = 0; k < t.shape.rank(); ++k) {
      if (!t.shape.dims[k].is_unknown() || a.dims[k].is_unknown() || b.dims[k].is_unknown())
        continue;
      t.shape.dims[k] =
          data_dependent(ctx, max(a.dims[k], b.dims[k]),
                         "output " + std::to_string(i) + " axis " + std::to_string(k));
    }
    set_output(r, i, t.dtype, t.shape);
  }
}

// Loop(M, cond, v_initial...) with body(iter_num, cond, v...) -> (cond, v..., scan...).
void infer_loop(const InferContext& ctx, InferResult& r) {
  std::vector<TensorType> formal{{DType::int64, ranked({})}, {DType::boolean, ranked({})}};
  for (size_t i = 2; i < ctx.input_count(); ++i) {
    formal.push_back(ctx.has_input(i) ? ctx.input(i) : TensorType{});
  }
  const size_t carried = formal.size() - 2;
  SubgraphResult body = ctx.infer_subgraph("body", formal);
  if (body.outputs.size() < carried + 1) ctx.fail("the body has too few outputs");
  // A carried value whose shape the body changes: infer once more with what holds for both.
  bool changed = false;
  for (size_t i = 0; i < carried; ++i) {
    const TensorType m = merge(formal[i + 2], body.outputs[i + 1]);
    if (!same_type(m, formal[i + 2])) {
      formal[i + 2] = m;
      changed = true;
    }
  }
  if (changed) body = ctx.infer_subgraph("body", formal);
  for (size_t i = 0; i < carried; ++i) {
    const TensorType m = merge(formal[i + 2], body.outputs[i + 1]);
    set_output(r, i, m.dtype, m.shape);
  }
  // Without a condition input the loop runs exactly M times; with one, at most M. Exporters
  // write a while loop as M = INT64_MAX: no bound worth planning for.
  Dim trips = Dim::unknown();
  if (ctx.has_input(0)) {
    if (const auto m = ctx.input_ints(0); m && m->size() == 1) {
      constexpr int64_t kLargestBound = int64_t{1} << 31;
      const int64_t count = std::max<int64_t>((*m)[0], 0);
      if (!ctx.has_input(1)) {
        trips = Dim::known(count);
      } else if (count < kLargestBound) {
        trips = data_dependent(ctx, Dim::known(count), "trip count");
      }
    }
  }
  for (size_t k = carried + 1; k < body.outputs.size(); ++k) {
    const TensorType& t = body.outputs[k];
    Shape s = Shape::unranked();
    if (t.shape.ranked) {
      s = ranked({trips});
      s.dims.insert(s.dims.end(), t.shape.dims.begin(), t.shape.dims.end());
    }
    set_output(r, k - 1, t.dtype, s);
  }
}

Shape without(const Shape& s, size_t axis) {
  Shape out = s;
  if (out.ranked && axis < out.rank()) out.dims.erase(out.dims.begin() + static_cast<long>(axis));
  return out;
}

// Scan (opset 9+): states and scan inputs; opset 8 has a leading batch axis and sequence_lens.
void infer_scan(const InferContext& ctx, InferResult& r) {
  const bool v8 = ctx.opset > 0 && ctx.opset < 9;
  const size_t first = v8 ? 1 : 0;
  const auto m = static_cast<size_t>(ctx.attr_int("num_scan_inputs", 0));
  if (ctx.input_count() < first + m) ctx.fail("fewer inputs than num_scan_inputs");
  const size_t states = ctx.input_count() - first - m;
  const auto in_axes = ctx.attr_ints("scan_input_axes").value_or(std::vector<int64_t>(m, 0));
  const auto out_axes_attr = ctx.attr_ints("scan_output_axes");
  std::vector<TensorType> formal;
  for (size_t i = 0; i < states; ++i) {
    TensorType t = ctx.input(first + i);
    if (v8) t.shape = without(t.shape, 0);
    formal.push_back(t);
  }
  Dim seq = Dim::unknown();
  Dim batch = Dim::unknown();
  for (size_t j = 0; j < m; ++j) {
    TensorType t = ctx.input(first + states + j);
    if (t.shape.ranked) {
      if (v8) {
        if (t.shape.rank() < 2) ctx.fail("a scan input needs batch and sequence axes");
        if (j == 0) batch = t.shape.dims[0], seq = t.shape.dims[1];
        t.shape = without(without(t.shape, 0), 0);
      } else {
        const size_t axis =
            normalize_axis(ctx, j < in_axes.size() ? in_axes[j] : 0, t.shape.rank());
        if (j == 0) seq = t.shape.dims[axis];
        t.shape = without(t.shape, axis);
      }
    }
    formal.push_back(t);
  }
  const SubgraphResult body = ctx.infer_subgraph("body", formal);
  if (body.outputs.size() < states) ctx.fail("the body has fewer outputs than states");
  for (size_t i = 0; i < body.outputs.size(); ++i) {
    const TensorType& t = body.outputs[i];
    Shape s = t.shape;
    if (s.ranked && i >= states) {
      // Scan outputs gain the sequence axis (at scan_output_axes, else first).
      size_t axis = 0;
      const size_t k = i - states;
      if (!v8 && out_axes_attr && k < out_axes_attr->size()) {
        axis = normalize_axis(ctx, (*out_axes_attr)[k], s.rank() + 1);
      }
      s.dims.insert(s.dims.begin() + static_cast<long>(axis), seq);
    }
    if (s.ranked && v8) s.dims.insert(s.dims.begin(), batch);
    set_output(r, i, t.dtype, s);
  }
}

// The branch a known condition picks is the only one that runs (infer_if's rule, read from the
// condition value inference left on the node's input).
bool if_branch_runs(const Graph& g, const Node& n, size_t index) {
  if (n.inputs.empty() || n.inputs[0] == kNoValue) return true;
  const std::optional<KnownValue>& known = g.value(n.inputs[0]).known;
  const std::optional<bool> cond = known ? single_condition(known->int_values()) : std::nullopt;
  if (!cond) return true;
  return n.subgraphs.at(index).attribute == (*cond ? "then_branch" : "else_branch");
}

OpSchema with_subgraphs(OpSchema s) {
  s.has_subgraphs = true;
  return s;
}

}  // namespace

void register_control_flow(OpRegistry& r) {
  OpSchema if_row = with_subgraphs(op("If", 1, 1, infer_if, 1, V));
  if_row.subgraph_runs = if_branch_runs;
  r.add(if_row);
  r.add(with_subgraphs(op("Loop", 2, V, infer_loop, 1, V)));
  r.add(with_subgraphs(op("Scan", 1, V, infer_scan, 1, V)));
}

}  // namespace footprint::graph::ops
