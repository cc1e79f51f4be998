#pragma once
// Strided gathers into a contiguous output: a tensor read through arbitrary element strides
// (negative for reversed slices, 0 for broadcasts), dims merged, contiguous runs copied whole.
//
//   strided_copy<T>(rank, dims, strides, src, dst, ctx.threads());
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "dtype_dispatch.hpp"
#include "footprint/graph/kernel.hpp"
#include "index_space.hpp"
#include "parallel_for.hpp"

namespace footprint::runtime::kernels {

// Copies a tensor of `rank` dims (up to 2 x kMaxRank) read through arbitrary element strides
// (negative for reversed slices, 0 for broadcasts) from `src` into contiguous `dst`.
inline constexpr size_t kMaxCopyRank = 2 * kMaxRank;
using CopyIndex = std::array<int64_t, kMaxCopyRank>;

template <class T>
void strided_copy(size_t rank, const CopyIndex& dims, const CopyIndex& strides, const T* src,
                  T* dst, int threads) {
  // Merge adjacent dims that the source walks contiguously, and drop extents of 1.
  CopyIndex md{};
  CopyIndex ms{};
  size_t r = 0;
  size_t total = 1;
  for (size_t d = 0; d < rank; ++d) {
    total *= static_cast<size_t>(dims[d]);
    if (dims[d] == 1) continue;
    if (r > 0 && ms[r - 1] == strides[d] * dims[d]) {
      md[r - 1] *= dims[d];
      ms[r - 1] = strides[d];
    } else {
      md[r] = dims[d];
      ms[r] = strides[d];
      ++r;
    }
  }
  if (total == 0) return;
  if (r == 0) {
    dst[0] = src[0];
    return;
  }
  const auto len = static_cast<size_t>(md[r - 1]);
  const int64_t inner = ms[r - 1];
  const size_t rows = total / len;
  parallel_for(
      threads, rows,
      [&](size_t begin, size_t end) {
        CopyIndex at{};
        int64_t off = 0;
        size_t rest = begin;
        for (size_t d = r - 1; d-- > 0;) {
          at[d] = static_cast<int64_t>(rest % static_cast<size_t>(md[d]));
          rest /= static_cast<size_t>(md[d]);
          off += at[d] * ms[d];
        }
        for (size_t row = begin; row < end; ++row) {
          T* out = dst + row * len;
          const T* in = src + off;
          if (inner == 1) {
            std::memcpy(out, in, len * sizeof(T));
          } else if (inner == 0) {
            std::fill_n(out, len, in[0]);
          } else {
            for (size_t i = 0; i < len; ++i) out[i] = in[static_cast<int64_t>(i) * inner];
          }
          for (size_t d = r - 1; d-- > 0;) {
            off += ms[d];
            if (++at[d] < md[d]) break;
            off -= at[d] * ms[d];
            at[d] = 0;
          }
        }
      },
      std::max<size_t>(1, 16384 / len));
}

// The output's dims in a CopyIndex (for strided_copy).
inline CopyIndex copy_dims(std::span<const int64_t> dims) {
  CopyIndex c{};
  std::copy(dims.begin(), dims.end(), c.begin());
  return c;
}

// y = x read through `strides` from `offset` (elements), whatever the dtype.
inline void gather_strided(graph::KernelContext& ctx, const graph::TensorRef& x,
                           graph::TensorRef& y, size_t rank, const CopyIndex& dims,
                           const CopyIndex& strides, int64_t offset = 0) {
  dispatch_bits(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    strided_copy<T>(rank, dims, strides, x.as<const T>() + offset, y.as<T>(), ctx.threads());
  });
}

}  // namespace footprint::runtime::kernels
