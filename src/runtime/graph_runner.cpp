#include "graph_runner.hpp"

#include <chrono>
#include <cstring>

#include "footprint/analysis/memory_order.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/node_runner.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/plan/planner.hpp"
#include "kernels/through_float32.hpp"
#include "runner/graph_error.hpp"
#include "runner/step_context.hpp"
#include "runner/tensor_bytes.hpp"

namespace footprint::runtime {

using analysis::Category;
using runner::bytes_of;

GraphRunner::GraphRunner(const graph::Graph& g, const DimBindings& dims,
                         const SessionOptions& options, const GraphRunner* parent)
    : g_(g),
      dims_(dims),
      options_(options),
      parent_(parent),
      extents_(g_, dims_, parent_ != nullptr ? &parent_->extents_ : nullptr),
      children_(make_children()),
      planned_(plan_graph()),
      placement_(g_, planned_.program, planned_.timeline, planned_.plan),
      constants_(g_, planned_.program, planned_.timeline, extents_, placement_,
                 placement_.take_weights(), this, options_.threads, pointers_),
      prepared_(g_, planned_.program, planned_.timeline, extents_, constants_, this, pointers_) {}

GraphRunner::~GraphRunner() = default;

void GraphRunner::fail(const std::string& what) const {
  runner::fail(g_, what);
}

GraphRunner::Children GraphRunner::make_children() const {
  Children children(g_.nodes().size());
  for (size_t id = 0; id < g_.nodes().size(); ++id) {
    const graph::Node& n = g_.node(static_cast<graph::NodeId>(id));
    for (size_t i = 0; i < n.subgraphs.size(); ++i) {
      // A subgraph that cannot run (the untaken branch of a known condition) is never prepared.
      children[id].push_back(
          graph::subgraph_runs(g_, n, i)
              ? std::make_unique<GraphRunner>(*n.subgraphs[i].graph, dims_, options_, this)
              : nullptr);
    }
  }
  return children;
}

const GraphRunner* GraphRunner::find_runner(const graph::Graph& sub) const {
  for (const auto& runners : children_) {
    for (const auto& child : runners) {
      if (!child) continue;
      if (&child->graph() == &sub) return child.get();
      if (const GraphRunner* deeper = child->find_runner(sub)) return deeper;
    }
  }
  return nullptr;
}

const GraphRunner& GraphRunner::child_for(const graph::Graph& sub) const {
  const GraphRunner* r = find_runner(sub);
  if (r == nullptr) fail("subgraph " + in_quotes(sub.name()) + " has no runner");
  return *r;
}

GraphRunner::Planned GraphRunner::plan_graph() const {
  analysis::GraphProgramOptions po;
  po.inputs = analysis::InputsPolicy::caller;
  po.dims = dims_;
  // A branch runs inside its node's step, in the arena its own runner planned.
  po.subgraph_arena = [this](const graph::Graph& sub, const analysis::GraphProgram&,
                             const analysis::Timeline&) { return child_for(sub).arena_bytes(); };
  if (options_.order == "memory" && parent_ == nullptr) {
    po.order = analysis::memory_order(g_, po).order;
  }
  Planned p;
  p.program = analysis::build_program(g_, po);
  p.steps.reserve(p.program.step_nodes.size());
  for (graph::NodeId id : p.program.step_nodes) {
    Step step;
    step.node = id;
    p.steps.push_back(step);
  }
  p.timeline = analysis::simulate(p.program.program);
  const std::vector<plan::Buffer> buffers = analysis::arena_buffers(p.timeline, p.program.program);
  p.plan = plan::plan_buffers(buffers, options_.planner);
  for (size_t i = 0; i < p.timeline.buffers.size(); ++i) {
    const analysis::BufferLifetime& b = p.timeline.buffers[i];
    if (b.category != Category::workspace) continue;
    p.steps[static_cast<size_t>(b.first)].workspace_offset = p.plan.offsets[i];
    p.steps[static_cast<size_t>(b.first)].workspace_bytes = b.bytes;
  }
  return p;
}

void GraphRunner::point_values(std::byte* arena, std::span<const graph::TensorRef> inputs,
                               std::span<const graph::TensorRef> outputs) {
  // Outer values are the enclosing graph's, pointed by its run before this one runs.
  const std::span<void* const> outer =
      parent_ != nullptr ? std::span<void* const>(parent_->pointers_) : std::span<void* const>();
  placement_.point({arena, inputs, outputs, constants_.weights(), constants_.constants(), outer},
                   pointers_);
}

void GraphRunner::run_step(size_t s, std::span<std::byte> arena, int threads) {
  graph::NodeContext& ctx = prepared_.context(s);
  runner::point_context(ctx, pointers_);
  ctx.scratch = arena.subspan(static_cast<size_t>(planned_.steps[s].workspace_offset),
                              static_cast<size_t>(planned_.steps[s].workspace_bytes));
  ctx.thread_count = threads;
  ctx.subgraph_offset = static_cast<size_t>(planned_.program.step_subgraph_offset[s]);
  check_pointers(s, ctx);
  graph::run(ctx);
  if (ctx.node().rounded_outputs != 0) kernels::round_carried_outputs(ctx);
}

// Every tensor a step touches has a home before it runs; a null one is a placement bug, caught
// here rather than as a crash inside a kernel.
void GraphRunner::check_pointers(size_t step, const graph::NodeContext& ctx) const {
  const graph::Node& n = ctx.node();
  // An input the kernel's state replaces (packed weights) may have been released.
  auto check = [&](const std::vector<graph::ValueId>& ids,
                   const std::vector<graph::TensorRef>& refs, bool inputs) {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] == graph::kNoValue || refs[i].data != nullptr || refs[i].bytes() == 0) continue;
      if (inputs && prepared_.replaced(step, i)) continue;
      throw Error(
          "node " + n.label(ctx.node_id()) + ": " + in_quotes(g_.value(ids[i]).name) +
          " has no memory (root " + in_quotes(g_.value(planned_.timeline.storage[ids[i]]).name) +
          ", category " +
          std::string(analysis::category_name(
              planned_.program.program.tensors[planned_.timeline.storage[ids[i]]].category)) +
          ", " + std::to_string(planned_.program.program.tensors[ids[i]].bytes) + " bytes)");
    }
  };
  check(n.inputs, ctx.inputs, true);
  check(n.outputs, ctx.outputs, false);
}

void GraphRunner::run(std::span<std::byte> arena, std::span<const graph::TensorRef> inputs,
                      std::span<const graph::TensorRef> outputs, int threads,
                      std::span<uint64_t> step_heap, std::span<uint64_t> step_ns) {
  if (arena.size() < arena_bytes()) fail("the arena is smaller than the plan");
  extents_.start_run();
  point_values(arena.data(), inputs, outputs);
  using Clock = std::chrono::steady_clock;
  for (size_t s = 0; s < planned_.steps.size(); ++s) {
    const bool timed = s < step_ns.size();
    const auto start = timed ? Clock::now() : Clock::time_point{};
    const runner::StepExtents kind = prepared_.extents_kind(s);
    const bool bounded = kind != runner::StepExtents::fixed;
    if (bounded)
      extents_.enter(prepared_.context(s), kind, planned_.steps[s].workspace_bytes, pointers_);
    if (!prepared_.skipped(s)) run_step(s, arena, threads);
    if (bounded) extents_.leave(prepared_.context(s), kind);
    if (timed) {
      step_ns[s] = static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    }
    if (s < step_heap.size()) step_heap[s] = heap::snapshot().current_bytes;
  }
  for (const auto& [k, v] : placement_.output_copies()) {
    const size_t bytes = bytes_of(g_.value(v).dtype, run_extents(v));
    if (bytes == 0 || outputs[k].data == pointers_[v]) continue;
    // As check_pointers for a step: a placement bug is an error naming the value, not a crash.
    if (pointers_[v] == nullptr || outputs[k].data == nullptr) {
      fail("output " + std::to_string(k) + " (" + in_quotes(g_.value(v).name) +
           ") has no memory to be copied " + (pointers_[v] == nullptr ? "from" : "into"));
    }
    std::memcpy(outputs[k].data, pointers_[v], bytes);
  }
}

void GraphRunner::run_subgraph(graph::NodeId node, std::string_view attribute,
                               std::span<const graph::TensorRef> inputs,
                               std::span<graph::TensorRef> outputs, std::span<std::byte> scratch,
                               int threads) {
  const auto& subs = g_.node(node).subgraphs;
  for (size_t i = 0; i < subs.size(); ++i) {
    if (subs[i].attribute != attribute) continue;
    if (!children_[static_cast<size_t>(node)][i])
      fail("subgraph " + in_quotes(attribute) + " cannot run: its condition was known");
    GraphRunner& child = *children_[static_cast<size_t>(node)][i];
    const auto& outs = child.graph().outputs();
    if (outputs.size() != outs.size()) fail("subgraph " + in_quotes(attribute) + ": output count");
    const auto& node_outs = g_.node(node).outputs;
    for (size_t k = 0; k < outs.size(); ++k) {
      // A branch's output is at most the node's; exactly it, unless either depends on values.
      const size_t planned = bytes_of(child.graph().value(outs[k]).dtype, child.extents(outs[k]));
      const bool node_varies =
          k < node_outs.size() && node_outs[k] != graph::kNoValue && bounded(node_outs[k]);
      const size_t room = node_varies
                              ? bytes_of(g_.value(node_outs[k]).dtype, extents(node_outs[k]))
                              : outputs[k].bytes();
      const bool varies = child.bounded(outs[k]) || node_varies;
      if (planned > room || (!varies && planned != room)) {
        throw Error("node " + g_.node(node).label(node) + ": " + std::string(attribute) +
                    " output " + std::to_string(k) + " " +
                    child.graph().value(outs[k]).shape.to_string() + " is planned at " +
                    std::to_string(planned) + " bytes, the node's at " + std::to_string(room));
      }
    }
    child.run(scratch, inputs, {outputs.data(), outputs.size()}, threads);
    // What the branch produced, for the node to report.
    for (size_t k = 0; k < outs.size(); ++k) outputs[k].dims = child.run_extents(outs[k]);
    return;
  }
  fail("node " + g_.node(node).label(node) + " has no subgraph " + in_quotes(attribute));
}

}  // namespace footprint::runtime
