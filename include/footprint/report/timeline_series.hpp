#pragma once
// The timeline as series a chart can draw: bytes per step split by category, and the few steps
// worth drawing when there are more steps than pixels.
//
//   std::vector<CategoryBytes> c = bytes_by_category(timeline, program);
//   std::vector<size_t> drawn = downsample({totals, lives}, 2000);  // keeps every series' peak
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "footprint/analysis/memory_program.hpp"
#include "footprint/analysis/timeline.hpp"

namespace footprint::report {

// Bytes live during one step, by category. The five add up to the step's total_bytes exactly.
struct CategoryBytes {
  uint64_t weights = 0;
  uint64_t inputs = 0;
  uint64_t activations = 0;
  uint64_t workspace = 0;
  uint64_t outputs = 0;
  uint64_t total() const { return weights + inputs + activations + workspace + outputs; }
};

// One entry per step of the timeline. Activations and workspace come from the step itself; the
// rest of the step's total beyond weights is inputs and outputs, split by the output buffers'
// producers (outputs are never freed, so they accumulate from the step that writes them).
std::vector<CategoryBytes> bytes_by_category(const analysis::Timeline& timeline,
                                             const analysis::MemoryProgram& program);

// Indices of the points to draw, ascending: all of them when there are at most max_buckets;
// otherwise the steps are cut into max_buckets runs of equal length and each run contributes the
// first step where each series is largest (so every series' peak is kept exactly), plus the
// first and last step. All series must have the same length; at most
// max_buckets * series + 2 indices come back.
std::vector<size_t> downsample(std::initializer_list<std::span<const uint64_t>> series,
                               size_t max_buckets);

}  // namespace footprint::report
