#pragma once
// Instances and checks the planner tests share.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "footprint/plan/planner.hpp"
#include "footprint/plan/validate.hpp"

namespace footprint::plan::testing {

inline Buffer buffer(int64_t lower, int64_t upper, int64_t size, int64_t alignment = 1,
                     std::optional<int64_t> fixed = std::nullopt) {
  static int next_id = 0;
  return Buffer{"b" + std::to_string(next_id++), lower, upper, size, alignment, fixed};
}

// Small random instances: lifetimes in [0, 8), sizes 1..6, some aligned, some fixed.
inline std::vector<Buffer> random_instance(std::mt19937& rng, size_t n, bool aligned, bool fixed) {
  std::vector<Buffer> out;
  for (size_t i = 0; i < n; ++i) {
    const int64_t lower = rng() % 7;
    const int64_t upper = lower + 1 + rng() % 4;
    Buffer b = buffer(lower, upper, 1 + rng() % 6, aligned ? 1 + rng() % 4 : 1);
    if (fixed && i == 0) b.fixed_offset = b.alignment * static_cast<int64_t>(rng() % 3);
    out.push_back(b);
  }
  return out;
}

// The optimum by brute force: every placement order, each buffer at the lowest offset clear of
// those before it (fixed buffers first). Some order reaches every least-sum plan, so the minimum
// over orders is the optimum. n! orders: keep n <= 7.
inline int64_t brute_force_optimum(const std::vector<Buffer>& buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  int64_t best = INT64_MAX;
  do {
    std::vector<int64_t> offset(buffers.size(), -1);
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (buffers[i].fixed_offset) offset[i] = *buffers[i].fixed_offset;
    }
    for (const size_t i : order) {
      if (offset[i] >= 0) continue;
      const Buffer& b = buffers[i];
      for (int64_t at = 0;; at += b.alignment) {
        bool clear = true;
        for (size_t j = 0; j < buffers.size() && clear; ++j) {
          clear = offset[j] < 0 || !conflict(b, buffers[j]) || at + b.size <= offset[j] ||
                  offset[j] + buffers[j].size <= at;
        }
        if (clear) {
          offset[i] = at;
          break;
        }
      }
    }
    best = std::min(best, arena_bytes(buffers, offset));
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

// Every plan a test looks at goes through the validator.
inline void expect_valid(const std::vector<Buffer>& buffers, const Plan& p) {
  const auto violation = find_violation(buffers, p.offsets);
  EXPECT_FALSE(violation) << *violation;
  EXPECT_EQ(p.arena_bytes, arena_bytes(buffers, p.offsets));
}

}  // namespace footprint::plan::testing
