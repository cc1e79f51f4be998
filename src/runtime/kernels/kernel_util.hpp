#pragma once
// Helpers every kernel family shares: dtype dispatch, broadcasting, parallel loops.
#include <omp.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "footprint/core/dtype.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::runtime::kernels {

// Calls f(T{}) with the C++ type of `t` for the plain numeric dtypes (and bool as bool);
// returns false for the others (float16, strings, ...), so the caller can fail naming them.
template <class F>
bool dispatch_numeric(DType t, F&& f) {
  switch (t) {
    case DType::float32:
      f(float{});
      return true;
    case DType::float64:
      f(double{});
      return true;
    case DType::int8:
      f(int8_t{});
      return true;
    case DType::uint8:
      f(uint8_t{});
      return true;
    case DType::int16:
      f(int16_t{});
      return true;
    case DType::uint16:
      f(uint16_t{});
      return true;
    case DType::int32:
      f(int32_t{});
      return true;
    case DType::uint32:
      f(uint32_t{});
      return true;
    case DType::int64:
      f(int64_t{});
      return true;
    case DType::uint64:
      f(uint64_t{});
      return true;
    case DType::boolean:
      f(bool{});
      return true;
    default:
      return false;
  }
}

// Strides (in elements) of a row-major tensor with `dims`.
inline std::vector<int64_t> row_major_strides(std::span<const int64_t> dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

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

// Runs body(begin, end) over [0, n) in up to `threads` contiguous chunks; one chunk (no thread
// team) when the work is small.
template <class F>
void parallel_for(int threads, size_t n, F&& body, size_t min_chunk = 4096) {
  const size_t chunks = threads <= 1 || n < 2 * min_chunk
                            ? 1
                            : std::min<size_t>(static_cast<size_t>(threads), n / min_chunk);
  if (chunks <= 1) {
    body(size_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static)
  for (size_t c = 0; c < chunks; ++c) body(n * c / chunks, n * (c + 1) / chunks);
}

inline std::string dtype_label(DType t) {
  return std::string(dtype_name(t));
}

}  // namespace footprint::runtime::kernels
