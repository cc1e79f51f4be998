#pragma once
// Each channel's mean over the pixels, in double (a long plane keeps double's accuracy): the
// global average pools and the squeeze of a squeeze-and-excitation block read them so.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "float16.hpp"
#include "parallel_for.hpp"
#include "wide_vectors.hpp"

namespace footprint::runtime::kernels {

// The sum of a plane in one vector of partial sums (32 bytes: one AVX2 register, half an
// AVX-512 one, two SSE2 ones; GCC lowers a vector wider than the target through the stack), so
// the adds are independent lanes rather than one chain of dependent double adds; flushed into a
// double every kBlock elements so that long planes keep nearly double's accuracy.
template <class T>
double plane_sum(const T* p, size_t n) {
  // A typedef: GCC ignores vector_size on an alias of a dependent type.
  typedef T Lanes __attribute__((vector_size(32)));  // NOLINT(modernize-use-using)
  constexpr size_t kLanes = sizeof(Lanes) / sizeof(T);
  constexpr size_t kBlock = 64 * kLanes;
  double total = 0;
  size_t i = 0;
  while (i + kLanes <= n) {
    const size_t end = i + std::min(kBlock, (n - i) / kLanes * kLanes);
    Lanes acc{};
    for (; i < end; i += kLanes) {
      Lanes v;
      std::memcpy(&v, p + i, sizeof v);
      acc += v;
    }
    for (size_t j = 0; j < kLanes; ++j) total += static_cast<double>(acc[j]);
  }
  for (; i < n; ++i) total += static_cast<double>(p[i]);
  return total;
}

// The sum of a plane of T: float and double as plane_sum adds them; a 16-bit float widened a
// chunk at a time (F16C where the CPU has it) and summed as float32's planes are.
template <class T>
double plane_total(const T* p, size_t n) {
  if constexpr (is_16bit_float<T>) {
    constexpr size_t kChunk = 1024;
    std::array<float, kChunk> row;  // NOLINT(cppcoreguidelines-pro-type-member-init): written first
    double sum = 0;
    for (size_t i = 0; i < n; i += kChunk) {
      const size_t m = std::min(kChunk, n - i);
      widen_row(p + i, row.data(), m);
      sum += plane_sum(row.data(), m);
    }
    return sum;
  } else {
    return plane_sum(p, n);
  }
}

// x [N, H, W, C] (`pixels` = H W) -> mean [N, C]. The pixels are rows of C values, added into
// double sums a part of the channels at a time (vectors of doubles, as wide as the CPU has);
// with several threads the parts are narrower, so that each thread has a share of one image's.
// T is float or a 16-bit float (each part of a row widened first, F16C where the CPU has it),
// each mean rounded once into T.
// Out is T, or float for a reader that computes in float (the mean rounded into R first: T, or
// the 16-bit type of which x's floats are carriers).
template <class T, class Out = T, class R = T>
void nhwc_channel_means(int threads, const T* x, int64_t n, int64_t pixels, int64_t c, Out* mean) {
  constexpr int64_t kWidest = 64;
  const int64_t share = (c + threads - 1) / std::max(threads, 1);
  const int64_t width =
      threads > 1 ? std::clamp<int64_t>((share + 7) / 8 * 8, 8, kWidest) : kWidest;
  const int64_t parts = (c + width - 1) / width;
  parallel_for(
      threads, static_cast<size_t>(n * parts),
      [&](size_t begin, size_t end) {
        with_wide_vectors([&] {
          for (size_t k = begin; k < end; ++k) {
            const int64_t image = static_cast<int64_t>(k) / parts;
            const int64_t c0 = static_cast<int64_t>(k) % parts * width;
            const int64_t w = std::min(width, c - c0);
            std::array<double, kWidest> sum{};
            const T* plane = x + image * pixels * c + c0;
            if constexpr (is_16bit_float<T>) {
              // Whole rows (w == c: the pixels are contiguous) widen several at a time, so that
              // narrow rows do not pay a conversion call each.
              constexpr int64_t kRows = 1024;
              std::array<float, kRows> rows{};
              const int64_t step = w == c ? std::max<int64_t>(1, kRows / c) : 1;
              for (int64_t p = 0; p < pixels; p += step) {
                const int64_t got = std::min(step, pixels - p);
                widen_row(plane + p * c, rows.data(), static_cast<size_t>(step == 1 ? w : got * c));
                for (int64_t q = 0; q < got; ++q) {
                  for (int64_t j = 0; j < w; ++j) sum[j] += static_cast<double>(rows[q * c + j]);
                }
              }
            } else {
              for (int64_t p = 0; p < pixels; ++p) {
                for (int64_t j = 0; j < w; ++j) sum[j] += static_cast<double>(plane[p * c + j]);
              }
            }
            for (int64_t j = 0; j < w; ++j) {
              const R m = narrow<R>(sum[j] / static_cast<double>(pixels));
              if constexpr (std::is_same_v<Out, R>) {
                mean[image * c + c0 + j] = m;
              } else {
                mean[image * c + c0 + j] = widen(m);
              }
            }
          }
        });
      },
      1);
}

}  // namespace footprint::runtime::kernels
