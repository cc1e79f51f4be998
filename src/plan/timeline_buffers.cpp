#include "footprint/plan/timeline_buffers.hpp"

#include <string>

namespace footprint::plan {
namespace {

// The CSV format has no quoting, so separators in names would split a row.
std::string csv_safe(std::string id) {
  for (char& c : id) {
    if (c == ',' || c == '\n' || c == '\r' || c == '"') c = '_';
  }
  return id;
}

std::string buffer_id(const analysis::BufferLifetime& b, const analysis::MemoryProgram& p) {
  if (b.category == analysis::Category::workspace) {
    const size_t step = static_cast<size_t>(b.first);
    return csv_safe("workspace:" + (step < p.steps.size() ? p.steps[step].name : ""));
  }
  const size_t t = static_cast<size_t>(b.tensor);
  return csv_safe(t < p.tensors.size() ? p.tensors[t].name : "#" + std::to_string(b.tensor));
}

}  // namespace

std::vector<Buffer> arena_buffers(const analysis::Timeline& timeline,
                                  const analysis::MemoryProgram& program) {
  std::vector<Buffer> out;
  out.reserve(timeline.buffers.size());
  for (const analysis::BufferLifetime& b : timeline.buffers) {
    Buffer buf;
    buf.id = buffer_id(b, program);
    buf.lower = b.first;
    buf.upper = static_cast<int64_t>(b.last) + 1;
    buf.size = static_cast<int64_t>(analysis::arena_round(b.bytes));
    buf.alignment = static_cast<int64_t>(analysis::kArenaAlignment);
    out.push_back(std::move(buf));
  }
  return out;
}

analysis::SubgraphArenaFn subgraph_arena(std::string_view algorithm, const PlanOptions& options) {
  return [name = std::string(algorithm), options](const graph::Graph& /*graph*/,
                                                  const analysis::GraphProgram& program,
                                                  const analysis::Timeline& timeline) {
    const std::vector<Buffer> buffers = arena_buffers(timeline, program.program);
    return static_cast<uint64_t>(plan_buffers(buffers, name, options).arena_bytes);
  };
}

}  // namespace footprint::plan
