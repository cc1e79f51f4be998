#pragma once
// Fixed-capacity index buffers and row-major index arithmetic for kernels. A kernel's run path
// never allocates (DESIGN.md "Prediction = measurement"), so index buffers are std::array with a
// rank limit (kMaxRank) and a kernel fails on tensors of a higher rank.
//
//   Index strides{};
//   strides_into(x.dims, strides);  // row-major element strides, no heap
//   const AxisView v = around(x.dims, axis);  // [outer, extent, inner]
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace footprint::runtime::kernels {

// The highest tensor rank the kernels index with fixed-size buffers.
inline constexpr size_t kMaxRank = 8;
using Index = std::array<int64_t, kMaxRank>;

// Where axis d of an NCHW tensor lies in its channels-last [N, H, W, C] storage: the rows
// graph::to_channels_last moves a node to read its NCHW attributes through it.
inline constexpr std::array<size_t, 4> kChannelsLastAxis{0, 3, 1, 2};

// Product of dims[begin, end).
inline size_t product(std::span<const int64_t> dims, size_t begin, size_t end) {
  size_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= static_cast<size_t>(dims[i]);
  return n;
}

// Row-major element strides of `dims` into a fixed buffer.
template <class Buffer>
void strides_into(std::span<const int64_t> dims, Buffer& s) {
  int64_t step = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    s[d] = step;
    step *= dims[d];
  }
}

// The tensor as [outer, extent, inner] around `axis`.
struct AxisView {
  size_t outer = 1, extent = 1, inner = 1;
};

inline AxisView around(std::span<const int64_t> dims, size_t axis) {
  return {product(dims, 0, axis), static_cast<size_t>(dims[axis]),
          product(dims, axis + 1, dims.size())};
}

// Prepare time only (it allocates): strides (in elements) of a row-major tensor with `dims`.
inline std::vector<int64_t> row_major_strides(std::span<const int64_t> dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

}  // namespace footprint::runtime::kernels
