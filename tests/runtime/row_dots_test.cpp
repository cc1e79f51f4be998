// The weight-row dot products (runtime/kernels/row_dots.hpp): a 16-bit row's sum is the sum its
// float copy gives, bit for bit (widening is exact and each row is summed in one order whatever
// the rows beside it), over row counts around the four summed together and lengths around the
// vector's lanes; and the float sums are those of a plain loop in that order within a few units
// of the last place.
#include "runtime/kernels/row_dots.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "footprint/core/float16.hpp"

namespace footprint::runtime::kernels {
namespace {

struct Rows {
  std::vector<Float16> halves;
  std::vector<BFloat16> bfloats;
  std::vector<float> from_halves, from_bfloats;
};

// rows x stride weights in (-1, 1), seeded, as both 16-bit types and their float copies.
Rows weights(size_t rows, size_t stride, uint32_t seed) {
  Rows w;
  uint32_t s = seed;
  for (size_t i = 0; i < rows * stride; ++i) {
    s = s * 1664525U + 1013904223U;
    const float f = static_cast<float>(s >> 8) / 8388608.0F - 1.0F;
    w.halves.push_back({half_from_float(f)});
    w.bfloats.push_back({bfloat16_from_float(f)});
    w.from_halves.push_back(float_from_half(w.halves.back().bits));
    w.from_bfloats.push_back(float_from_bfloat16(w.bfloats.back().bits));
  }
  return w;
}

TEST(RowDots, SixteenBitRowsSumAsTheirFloatCopies) {
  for (const size_t rows : {size_t{1}, size_t{3}, size_t{4}, size_t{5}, size_t{9}}) {
    for (const size_t cols :
         {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{40}, size_t{576}}) {
      const size_t stride = cols + 3;  // rows apart by more than their length
      const Rows w = weights(rows, stride, static_cast<uint32_t>(rows * 1000 + cols));
      std::vector<float> x(cols);
      for (size_t k = 0; k < cols; ++k) x[k] = std::sin(static_cast<float>(k)) * 2.0F;
      std::vector<float> h(rows), hf(rows), b(rows), bf(rows);
      row_dots(w.halves.data(), stride, x.data(), h.data(), cols, rows);
      row_dots(w.from_halves.data(), stride, x.data(), hf.data(), cols, rows);
      row_dots(w.bfloats.data(), stride, x.data(), b.data(), cols, rows);
      row_dots(w.from_bfloats.data(), stride, x.data(), bf.data(), cols, rows);
      for (size_t r = 0; r < rows; ++r) {
        EXPECT_EQ(h[r], hf[r]) << rows << " rows of " << cols << ", row " << r;
        EXPECT_EQ(b[r], bf[r]) << rows << " rows of " << cols << ", row " << r;
        double want = 0;
        double magnitude = 0;
        for (size_t k = 0; k < cols; ++k) {
          want += static_cast<double>(w.from_halves[r * stride + k]) * x[k];
          magnitude += std::fabs(static_cast<double>(w.from_halves[r * stride + k]) * x[k]);
        }
        // A float sum of `cols` terms: within cols units of float's last place of the terms'
        // magnitude (the bound of any summation order).
        EXPECT_NEAR(hf[r], want, magnitude * static_cast<double>(cols) * 0x1p-24 + 1e-30)
            << rows << " rows of " << cols << ", row " << r;
      }
    }
  }
}

}  // namespace
}  // namespace footprint::runtime::kernels
