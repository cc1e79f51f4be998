#pragma once
// Each channel's mean over the pixels, in double (a long plane keeps double's accuracy): the
// global average pools and the squeeze of a squeeze-and-excitation block read them so.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

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

// x [N, H, W, C] (`pixels` = H W) -> mean [N, C]. The pixels are rows of C floats, added into
// double sums a part of the channels at a time (vectors of doubles, as wide as the CPU has);
// with several threads the parts are narrower, so that each thread has a share of one image's.
inline void nhwc_channel_means(int threads, const float* x, int64_t n, int64_t pixels, int64_t c,
                               float* mean) {
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
            const float* plane = x + image * pixels * c + c0;
            for (int64_t p = 0; p < pixels; ++p) {
              for (int64_t j = 0; j < w; ++j) sum[j] += static_cast<double>(plane[p * c + j]);
            }
            for (int64_t j = 0; j < w; ++j) {
              mean[image * c + c0 + j] = static_cast<float>(sum[j] / static_cast<double>(pixels));
            }
          }
        });
      },
      1);
}

}  // namespace footprint::runtime::kernels
