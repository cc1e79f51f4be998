// The time index (src/plan/time_index.hpp) as a specification: whatever it keeps between queries
// (the path unions, the log of what changed them) and whatever it forgets when over its limits,
// a query answers what a scan of every placed buffer answers.
#include "plan/time_index.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "footprint/plan/buffer.hpp"

namespace footprint::plan::detail {
namespace {

// A trace with the index's hard case in it: long buffers (up to the whole horizon) over many
// short ones, so the free space at a time is in pieces and kept unions go stale often.
std::vector<Buffer> mixed_trace(uint64_t seed, size_t n, int64_t horizon) {
  std::mt19937_64 rng(seed);
  std::vector<Buffer> out;
  for (size_t i = 0; i < n; ++i) {
    const bool long_lived = rng() % 5 == 0;
    const auto lower = static_cast<int64_t>(rng() % static_cast<uint64_t>(horizon));
    const auto length = long_lived
                            ? 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(horizon))
                            : 1 + static_cast<int64_t>(rng() % 3);
    const auto size = 1 + static_cast<int64_t>(rng() % (long_lived ? 4096 : 256));
    const int64_t alignment = i % 7 == 0 ? 16 : 1;
    out.push_back({std::to_string(i), lower, lower + length, size, alignment, std::nullopt});
  }
  return out;
}

// Spans joined into their union, sorted and disjoint.
std::vector<Span> joined(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (!out.empty() && s.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, s.end);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

// The space taken by the placed buffers meeting buffers[i], by a scan of every placed buffer.
std::vector<Span> union_by_scan(const std::vector<Buffer>& buffers,
                                const std::vector<int64_t>& offsets,
                                const std::vector<uint32_t>& placed, uint32_t i) {
  std::vector<Span> spans;
  for (const uint32_t j : placed) {
    if (conflict(buffers[i], buffers[j]))
      spans.push_back({offsets[j], offsets[j] + buffers[j].size});
  }
  return joined(std::move(spans));
}

bool same(const std::vector<Span>& a, const std::vector<Span>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Span& x, const Span& y) {
    return x.begin == y.begin && x.end == y.end;
  });
}

// Places `buffers` largest first through an index with `limits`, checking every query against
// the scan: the space taken (taken_meeting) and the offset chosen (choose_offset, both fits).
void check_against_scan(const std::vector<Buffer>& buffers, TimeIndex::Limits limits,
                        const std::string& what) {
  std::vector<uint32_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return buffers[a].size > buffers[b].size; });
  TimeIndex index(buffers, limits);
  std::vector<int64_t> offsets(buffers.size(), 0);
  std::vector<uint32_t> placed;
  std::vector<Span> taken;
  for (size_t k = 0; k < order.size(); ++k) {
    const uint32_t i = order[k];
    std::vector<Span> expected = union_by_scan(buffers, offsets, placed, i);
    index.taken_meeting(i, taken);
    ASSERT_TRUE(same(joined(taken), expected)) << what << ": buffer " << k << " of the order";
    const Fit fit = k % 3 == 0 ? Fit::lowest : Fit::tightest;
    const int64_t by_scan = choose_offset(expected, buffers[i], fit);
    ASSERT_EQ(index.choose_offset(i, fit), by_scan) << what << ": buffer " << k << " of the order";
    offsets[i] = by_scan;
    index.add(i, {by_scan, by_scan + buffers[i].size});
    placed.push_back(i);
  }
}

TEST(TimeIndex, AnswersAsAScanWithWhateverItKeeps) {
  // Horizons of thousands of sections: the kept unions are below the root (depth > 6).
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const auto buffers = mixed_trace(seed, 1500, 3000 + 1000 * static_cast<int64_t>(seed));
    const std::string name = "seed " + std::to_string(seed);
    check_against_scan(buffers, TimeIndex::default_limits(buffers.size()), name + ", defaults");
    // Nothing kept: every query makes its path union again.
    check_against_scan(buffers, {.kept_spans = 0, .logged_spans = 0}, name + ", nothing kept");
    // A little kept and a short log, forgotten again and again: kept unions made before the log
    // was forgotten must be made again, not read stale.
    check_against_scan(buffers, {.kept_spans = 200, .logged_spans = 5}, name + ", tight limits");
  }
}

TEST(TimeIndex, SmallTracesUseTheRootAlone) {
  // Fewer sections than one kept union serves: the root's union is kept, and the answers hold.
  const auto buffers = mixed_trace(9, 300, 20);
  check_against_scan(buffers, TimeIndex::default_limits(buffers.size()), "20 steps");
  check_against_scan(buffers, {.kept_spans = 0, .logged_spans = 0}, "20 steps, nothing kept");
}

}  // namespace
}  // namespace footprint::plan::detail
