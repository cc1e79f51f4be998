#include "bounded_extents.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include "footprint/core/error.hpp"
#include "footprint/graph/op_registry.hpp"
#include "graph_error.hpp"
#include "tensor_bytes.hpp"

namespace footprint::runtime::runner {

BoundedExtents::BoundedExtents(const graph::Graph& g, const DimBindings& dims,
                               const BoundedExtents* parent)
    : g_(g) {
  if (parent == nullptr) top_bindings_ = dims;
  bindings_ = parent != nullptr ? parent->bindings_ : &top_bindings_;
  bind(dims);
  collect_origins(dims);
}

void BoundedExtents::bind(const DimBindings& dims) {
  const size_t n = g_.values().size();
  planned_.assign(n, {});
  known_.assign(n, false);
  bounded_.assign(n, 0);
  run_.assign(n, {});
  for (size_t v = 0; v < n; ++v) {
    const graph::Value& value = g_.value(static_cast<graph::ValueId>(v));
    if (!value.shape.ranked) continue;
    bool known = true;
    bool bounded = false;
    std::vector<int64_t> extents;
    extents.reserve(value.shape.rank());
    for (const Dim& d : value.shape.dims) {
      // A data-dependent extent is planned, prepared and allocated at its bound, as analysis
      // counts it; each run then gives it what the data made of it.
      std::optional<int64_t> e;
      if (d.is_data_dependent()) {
        const auto r = d.range(dims);
        if (r) e = r->second;
        bounded = true;
      } else {
        e = d.evaluate(dims);
      }
      if (!e || *e < 0) {
        known = false;
        break;
      }
      extents.push_back(*e);
    }
    if (!known) continue;
    if (bounded) run_[v] = extents;
    planned_[v] = std::move(extents);
    known_[v] = true;
    bounded_[v] = bounded ? 1 : 0;
  }
}

void BoundedExtents::collect_origins(const DimBindings& dims) {
  // What comes from outside (a branch's outer values) is bound by the graph that decides it.
  std::vector<std::string> outside;
  for (size_t v = 0; v < g_.values().size(); ++v) {
    const graph::Value& value = g_.value(static_cast<graph::ValueId>(v));
    if (value.kind != graph::ValueKind::input && value.kind != graph::ValueKind::outer) continue;
    for (const Dim& d : value.shape.dims) d.collect_bound_origins(outside);
  }
  for (const graph::Node& n : g_.nodes()) {
    for (graph::ValueId o : n.outputs) {
      if (o == graph::kNoValue) continue;
      for (const Dim& d : g_.value(o).shape.dims) {
        const auto origin = d.origin();
        if (!origin || std::find(outside.begin(), outside.end(), *origin) != outside.end())
          continue;
        // The run binds it under its origin's name, beside the named dims: one a model names
        // so too would be read for it.
        if (dims.contains(*origin)) {
          fail(g_, "a dim is named " + in_quotes(std::string(*origin)) +
                       ", as the data-dependent extent of that op");
        }
        int64_t* slot = &bindings_->emplace(std::string(*origin), -1).first->second;
        if (std::find(origins_.begin(), origins_.end(), slot) == origins_.end()) {
          origins_.push_back(slot);
          origin_names_.emplace_back(*origin);
        }
      }
    }
  }
}

std::pair<uint64_t, uint64_t> BoundedExtents::bounded_bytes(std::span<const int> storage) const {
  std::pair<uint64_t, uint64_t> out{0, 0};
  for (size_t v = 0; v < bounded_.size(); ++v) {
    if (!bounded_[v] || storage[v] != static_cast<int>(v)) continue;
    const DType t = g_.value(static_cast<graph::ValueId>(v)).dtype;
    out.first += bytes_of(t, planned_[v]);
    out.second += bytes_of(t, run_[v]);
  }
  return out;
}

void BoundedExtents::start_run() {
  for (int64_t* origin : origins_) *origin = -1;
}

// Whether value v's extents depend on values only along axis 0 (or not at all).
bool BoundedExtents::varies_only_in_rows(graph::ValueId v) const {
  if (v == graph::kNoValue || !bounded_[v]) return true;
  const auto& dims = g_.value(v).shape.dims;
  for (size_t k = 1; k < dims.size(); ++k) {
    if (dims[k].is_data_dependent()) return false;
  }
  return !dims.empty();
}

StepExtents BoundedExtents::classify(const graph::NodeContext& ctx) const {
  const graph::Node& n = ctx.node();
  const graph::ValueId* first_bounded = nullptr;
  for (const auto* list : {&n.inputs, &n.outputs}) {
    for (const graph::ValueId& v : *list) {
      if (v != graph::kNoValue && bounded_[v] && first_bounded == nullptr) first_bounded = &v;
    }
  }
  if (first_bounded == nullptr) return StepExtents::fixed;
  const graph::OpSchema& row = *n.schema;
  if (row.prepare == nullptr) return StepExtents::at_run_extents;
  // A kernel prepared for its extents (a primitive built for them) runs at the bound it was
  // prepared for, where its row promises that rows are independent and only rows vary.
  bool rows_only = row.rows_at_bound && !n.inputs.empty() && !n.outputs.empty() &&
                   n.inputs[0] != graph::kNoValue && varies_only_in_rows(n.inputs[0]) &&
                   varies_only_in_rows(n.outputs[0]);
  for (size_t i = 1; rows_only && i < n.inputs.size(); ++i) {
    rows_only = n.inputs[i] == graph::kNoValue || !bounded_[n.inputs[i]];
  }
  for (size_t i = 1; rows_only && i < n.outputs.size(); ++i) {
    rows_only = n.outputs[i] == graph::kNoValue || !bounded_[n.outputs[i]];
  }
  if (rows_only) return StepExtents::at_bound;
  const graph::Value& value = g_.value(*first_bounded);
  throw Error("node " + n.label(ctx.node_id()) +
              ": its kernel is prepared for fixed extents, and " + in_quotes(value.name) +
              " has extents that depend on values (" + std::string(dtype_name(value.dtype)) +
              value.shape.to_string() + "); footprint does not run this op on them yet");
}

bool BoundedExtents::evaluate_run(graph::ValueId v, std::vector<int64_t>& out) const {
  const std::vector<Dim>& dims = g_.value(v).shape.dims;
  const std::vector<int64_t>& bound = planned_[v];
  out.resize(dims.size());
  bool all = true;
  for (size_t k = 0; k < dims.size(); ++k) {
    const auto e = dims[k].evaluate(*bindings_);
    if (!e) {
      out[k] = bound[k];
      all = false;
    } else if (*e < 0 || *e > bound[k]) {
      fail(g_, "value " + in_quotes(g_.value(v).name) + " " + g_.value(v).shape.to_string() +
                   ": axis " + std::to_string(k) + " came to " + std::to_string(*e) +
                   ", outside its bound " + std::to_string(bound[k]));
    } else {
      out[k] = *e;
    }
  }
  return all;
}

void BoundedExtents::enter(graph::NodeContext& ctx, StepExtents kind, uint64_t workspace_bytes,
                           std::span<void* const> pointers) {
  const graph::Node& n = ctx.node();
  if (kind == StepExtents::at_bound) {
    // The kernel runs on the bound; the rows past this run's are zeros, not stale arena bytes.
    const graph::ValueId v = n.inputs[0];
    if (!bounded_[v]) return;
    if (!evaluate_run(v, run_[v]))
      fail(g_, "value " + in_quotes(g_.value(v).name) + " has no extents yet in this run");
    const size_t used = bytes_of(g_.value(v).dtype, run_[v]);
    const size_t planned = bytes_of(g_.value(v).dtype, planned_[v]);
    if (planned > used && pointers[v] != nullptr)
      std::memset(static_cast<std::byte*>(pointers[v]) + used, 0, planned - used);
    return;
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const graph::ValueId v = n.inputs[i];
    if (v == graph::kNoValue || !bounded_[v]) continue;
    if (!evaluate_run(v, run_[v])) {
      throw Error("node " + n.label(ctx.node_id()) + ": input " + std::to_string(i) + " " +
                  in_quotes(g_.value(v).name) + " " + g_.value(v).shape.to_string() +
                  " has no extents yet in this run");
    }
    ctx.inputs[i].dims = run_[v];
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const graph::ValueId v = n.outputs[i];
    if (v == graph::kNoValue || !bounded_[v]) continue;
    evaluate_run(v, run_[v]);  // a dim the op decides is given its bound
    ctx.outputs[i].dims = run_[v];
  }
  // A workspace sized for the bounds must hold what the kernel needs for these extents.
  if (n.schema->workspace != nullptr) {
    const uint64_t needed = graph::workspace_bytes(ctx);
    if (needed > workspace_bytes) {
      throw Error("node " + n.label(ctx.node_id()) + ": needs " + std::to_string(needed) +
                  " bytes of scratch for this run's extents, more than the " +
                  std::to_string(workspace_bytes) + " planned for their bounds");
    }
  }
}

void BoundedExtents::leave(graph::NodeContext& ctx, StepExtents kind) {
  const graph::Node& n = ctx.node();
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const graph::ValueId v = n.outputs[i];
    if (v == graph::kNoValue || !bounded_[v]) continue;
    const std::span<const int64_t> given = ctx.outputs[i].dims;
    const bool reported =
        i < ctx.reported_extents.size() && given.data() == ctx.reported_extents[i].data();
    const std::vector<Dim>& dims = g_.value(v).shape.dims;
    for (size_t k = 0; k < dims.size() && k < given.size(); ++k) {
      const auto origin = dims[k].origin();
      if (!origin) continue;
      const auto it = bindings_->find(*origin);
      if (it == bindings_->end() || it->second >= 0) continue;
      if (!n.schema->reports_extents) {
        throw Error("node " + n.label(ctx.node_id()) + ": output " + std::to_string(i) + " " +
                    in_quotes(g_.value(v).name) + " " + g_.value(v).shape.to_string() +
                    " has extents that depend on values, and its kernel does not report them; "
                    "footprint does not run this op on such extents yet");
      }
      it->second = given[k];
    }
    // Inference said how the extents follow from the ones reported so far: what the kernel
    // produced must be that (the runtime half of `run --check-shapes`).
    // (Not reported, `given` is run_[v] itself, with the bound where the op decided.)
    std::vector<int64_t>& now = run_[v];
    const bool evaluated = evaluate_run(v, now);
    if (!evaluated || (reported && !std::equal(given.begin(), given.end(), now.begin()))) {
      throw Error("node " + n.label(ctx.node_id()) + ": output " + std::to_string(i) + " " +
                  in_quotes(g_.value(v).name) + " came out " + extents_text(given) +
                  ", where inference says " + g_.value(v).shape.to_string() + " = " +
                  extents_text(now));
    }
    // A step run at the bound keeps the extents it was prepared with.
    if (kind != StepExtents::at_bound) ctx.outputs[i].dims = now;
  }
}

}  // namespace footprint::runtime::runner
