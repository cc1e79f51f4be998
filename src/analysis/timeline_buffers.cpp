#include "footprint/analysis/timeline_buffers.hpp"

#include <string>

namespace footprint::analysis {
namespace {

// The CSV format has no quoting, so separators in names would split a row.
std::string csv_safe(std::string id) {
  for (char& c : id) {
    if (c == ',' || c == '\n' || c == '\r' || c == '"') c = '_';
  }
  return id;
}

std::string buffer_id(const BufferLifetime& b, const MemoryProgram& p) {
  if (b.category == Category::workspace) {
    const size_t step = static_cast<size_t>(b.first);
    return csv_safe("workspace:" + (step < p.steps.size() ? p.steps[step].name : ""));
  }
  const size_t t = static_cast<size_t>(b.tensor);
  return csv_safe(t < p.tensors.size() ? p.tensors[t].name : "#" + std::to_string(b.tensor));
}

}  // namespace

std::vector<plan::Buffer> arena_buffers(const Timeline& timeline, const MemoryProgram& program) {
  std::vector<plan::Buffer> out;
  out.reserve(timeline.buffers.size());
  for (const BufferLifetime& b : timeline.buffers) {
    plan::Buffer buf;
    buf.id = buffer_id(b, program);
    buf.lower = b.first;
    buf.upper = static_cast<int64_t>(b.last) + 1;
    buf.size = static_cast<int64_t>(arena_round(b.bytes));
    buf.alignment = static_cast<int64_t>(kArenaAlignment);
    out.push_back(std::move(buf));
  }
  return out;
}

SubgraphArenaFn subgraph_arena(std::string_view algorithm, const plan::PlanOptions& options) {
  return [name = std::string(algorithm), options](
             const graph::Graph& /*graph*/, const GraphProgram& program, const Timeline& timeline) {
    const std::vector<plan::Buffer> buffers = arena_buffers(timeline, program.program);
    return static_cast<uint64_t>(plan::plan_buffers(buffers, name, options).arena_bytes);
  };
}

}  // namespace footprint::analysis
