#include "footprint/report/timeline_series.hpp"

#include <algorithm>

namespace footprint::report {
namespace {

using analysis::Category;

// The tensor whose buffer `t` uses: t itself, or the end of its chain of views. Bounded by the
// tensor count, so a malformed chain ends instead of looping (simulate() rejects those anyway).
size_t view_root(const analysis::MemoryProgram& p, size_t t) {
  for (size_t hops = 0; hops < p.tensors.size(); ++hops) {
    const int next = p.tensors[t].view_of;
    if (next < 0 || static_cast<size_t>(next) >= p.tensors.size()) break;
    t = static_cast<size_t>(next);
  }
  return t;
}

// Output bytes allocated at each step: every buffer a graph output lives in (the output itself,
// or the activation it views), counted once, at the step that writes it. An output viewing an
// input stays an input buffer, as in the timeline.
std::vector<uint64_t> output_allocations(const analysis::MemoryProgram& p) {
  std::vector<int> producer(p.tensors.size(), -1);
  for (size_t s = 0; s < p.steps.size(); ++s) {
    for (const int t : p.steps[s].outputs) {
      if (t >= 0 && static_cast<size_t>(t) < p.tensors.size()) producer[t] = static_cast<int>(s);
    }
  }
  std::vector<bool> counted(p.tensors.size(), false);
  std::vector<uint64_t> at(p.steps.size(), 0);
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (p.tensors[t].category != Category::outputs) continue;
    const size_t root = view_root(p, t);
    const Category c = p.tensors[root].category;
    if (c != Category::activations && c != Category::outputs) continue;
    if (counted[root] || producer[root] < 0) continue;
    counted[root] = true;
    at[static_cast<size_t>(producer[root])] += p.tensors[root].bytes;
  }
  return at;
}

}  // namespace

std::vector<CategoryBytes> bytes_by_category(const analysis::Timeline& timeline,
                                             const analysis::MemoryProgram& program) {
  const std::vector<uint64_t> outputs_at = output_allocations(program);
  std::vector<CategoryBytes> out;
  out.reserve(timeline.steps.size());
  uint64_t outputs = 0;
  for (const analysis::StepMemory& s : timeline.steps) {
    if (static_cast<size_t>(s.index) < outputs_at.size()) outputs += outputs_at[s.index];
    CategoryBytes c;
    c.weights = timeline.weights_bytes;
    c.workspace = s.workspace_bytes;
    c.activations = s.live_bytes - s.workspace_bytes;
    // What is neither weights nor arena is inputs and outputs (StepMemory::total_bytes).
    const uint64_t held = s.total_bytes - timeline.weights_bytes - s.live_bytes;
    c.outputs = std::min(outputs, held);
    c.inputs = held - c.outputs;
    out.push_back(c);
  }
  return out;
}

std::vector<size_t> downsample(std::initializer_list<std::span<const uint64_t>> series,
                               size_t max_buckets) {
  const size_t n = series.size() == 0 ? 0 : series.begin()->size();
  std::vector<size_t> out;
  if (n <= max_buckets || max_buckets == 0) {
    out.resize(n);
    for (size_t i = 0; i < n; ++i) out[i] = i;
    return out;
  }
  out.reserve(max_buckets * series.size() + 2);
  out.push_back(0);
  for (size_t b = 0; b < max_buckets; ++b) {
    // Bucket b covers [n*b/B, n*(b+1)/B): equal lengths within one step, none empty as n > B.
    const size_t begin = n * b / max_buckets;
    const size_t end = n * (b + 1) / max_buckets;
    for (const std::span<const uint64_t> s : series) {
      out.push_back(
          static_cast<size_t>(std::max_element(s.begin() + static_cast<std::ptrdiff_t>(begin),
                                               s.begin() + static_cast<std::ptrdiff_t>(end)) -
                              s.begin()));
    }
  }
  out.push_back(n - 1);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace footprint::report
