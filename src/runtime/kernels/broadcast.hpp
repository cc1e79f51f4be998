#pragma once
// Broadcasting (numpy rules) over N operands: the output's index space with merged dims, walked
// row by row with each operand's offset.
//
//   BroadcastPlan<2> plan;
//   if (!plan_broadcast<2>(y.dims, {a.dims, b.dims}, plan)) ctx.fail("rank too high");
//   broadcast_rows(plan, ctx.threads(), [&](auto& off, size_t out, size_t len) { ... });
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "index_space.hpp"
#include "parallel_for.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {

// The output's index space with dims of extent 1 dropped and adjacent dims merged where every
// operand walks them as one, so the innermost loop is as long as possible. Strides are in
// elements; 0 where an operand is broadcast.
template <size_t N>
struct BroadcastPlan {
  size_t rank = 1;
  Index dims{};
  std::array<Index, N> strides{};

  size_t rows() const { return product(dims, 0, rank - 1); }
  size_t row_length() const { return static_cast<size_t>(dims[rank - 1]); }
  int64_t inner_stride(size_t operand) const { return strides[operand][rank - 1]; }
};

// False when the output's rank is above kMaxRank or below an operand's. Operand dims align to
// the right (numpy).
template <size_t N>
bool plan_broadcast(std::span<const int64_t> out, const std::array<std::span<const int64_t>, N>& in,
                    BroadcastPlan<N>& p) {
  if (out.size() > kMaxRank) return false;
  for (const auto& dims : in) {
    if (dims.size() > out.size()) return false;
  }
  std::array<Index, N> own{};  // each operand's strides aligned to the output's dims
  for (size_t k = 0; k < N; ++k) {
    const size_t offset = out.size() - in[k].size();
    int64_t s = 1;
    for (size_t d = out.size(); d-- > 0;) {
      const bool present = d >= offset;
      const int64_t extent = present ? in[k][d - offset] : 1;
      own[k][d] = extent == 1 ? 0 : s;
      s *= extent;
    }
  }
  size_t r = 0;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = r > 0;
    for (size_t k = 0; k < N && merge; ++k) merge = p.strides[k][r - 1] == own[k][d] * out[d];
    if (merge) {
      p.dims[r - 1] *= out[d];
      for (size_t k = 0; k < N; ++k) p.strides[k][r - 1] = own[k][d];
    } else {
      p.dims[r] = out[d];
      for (size_t k = 0; k < N; ++k) p.strides[k][r] = own[k][d];
      ++r;
    }
  }
  if (r == 0) {
    p.dims[0] = 1;
    for (size_t k = 0; k < N; ++k) p.strides[k][0] = 0;
    r = 1;
  }
  p.rank = r;
  return true;
}

// Calls row(offsets, out_offset, length) for rows [begin, end) of the plan, where offsets[k] is
// operand k's element offset at the row's start.
template <size_t N, class F>
void broadcast_rows_from(const BroadcastPlan<N>& p, F& row, size_t begin, size_t end) {
  const size_t len = p.row_length();
  // Decompose the first row index into the outer dims' coordinates.
  Index at{};
  size_t rest = begin;
  std::array<int64_t, N> off{};
  for (size_t d = p.rank - 1; d-- > 0;) {
    at[d] = static_cast<int64_t>(rest % static_cast<size_t>(p.dims[d]));
    rest /= static_cast<size_t>(p.dims[d]);
    for (size_t k = 0; k < N; ++k) off[k] += at[d] * p.strides[k][d];
  }
  for (size_t r = begin; r < end; ++r) {
    row(off, r * len, len);
    // Odometer step over the outer dims.
    for (size_t d = p.rank - 1; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) off[k] += p.strides[k][d];
      if (++at[d] < p.dims[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= at[d] * p.strides[k][d];
      at[d] = 0;
    }
  }
}

// Calls row(offsets, out_offset, length) for each innermost row of the plan, where offsets[k] is
// operand k's element offset at the row's start; rows are split over threads. kWide: each
// thread's rows run through with_wide_vectors.
template <size_t N, bool kWide = false, class F>
void broadcast_rows(const BroadcastPlan<N>& p, int threads, F&& row) {
  const size_t len = p.row_length();
  if (p.rows() == 1) {
    // One row (operands of the output's shape, or scalars): its parts go to the threads, each
    // part as a row. Every step splits a tensor of the same extents at the same elements, so
    // each thread finds its part where the step before left it, in its own core's cache.
    parallel_for(
        threads, len,
        [&](size_t begin, size_t end) {
          std::array<int64_t, N> off{};
          for (size_t k = 0; k < N; ++k) off[k] = static_cast<int64_t>(begin) * p.inner_stride(k);
          if constexpr (kWide) {
            with_wide_vectors([&] { row(off, begin, end - begin); });
          } else {
            row(off, begin, end - begin);
          }
        },
        16384);
    return;
  }
  parallel_for(
      threads, p.rows(),
      [&](size_t begin, size_t end) {
        if (begin >= end) return;
        if constexpr (kWide) {
          with_wide_vectors([&] { broadcast_rows_from<N>(p, row, begin, end); });
        } else {
          broadcast_rows_from<N>(p, row, begin, end);
        }
      },
      std::max<size_t>(1, 16384 / std::max<size_t>(len, 1)));
}

// Prepare time only (it allocates).
// Strides of an input broadcast (numpy rules) to `out_dims`: 0 where the input's dim is 1 or
// missing, so walking the output's index space reads the right input element.
inline std::vector<int64_t> broadcast_strides(std::span<const int64_t> in_dims,
                                              std::span<const int64_t> out_dims) {
  std::vector<int64_t> s(out_dims.size(), 0);
  const std::vector<int64_t> own = row_major_strides(in_dims);
  const size_t offset = out_dims.size() - in_dims.size();
  for (size_t i = 0; i < in_dims.size(); ++i) s[offset + i] = in_dims[i] == 1 ? 0 : own[i];
  return s;
}

}  // namespace footprint::runtime::kernels
