// The row conversions the 16-bit kernels use (runtime/kernels/float16.hpp) give core's bits
// (footprint/core/float16.hpp) for every element, whichever instructions the CPU has: widening
// every half pattern, narrowing floats around every rounding case, and rounding floats through
// a half and back in registers. Lengths that are not a multiple of any vector, NaNs (signalling
// and quiet, with payloads), infinities, subnormals and ties included.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "footprint/core/float16.hpp"
#include "runtime/kernels/float16.hpp"

namespace footprint::runtime::kernels {
namespace {

float from_bits(uint32_t b) {
  float f = 0;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

uint32_t bits_of(float f) {
  uint32_t b = 0;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Floats near every half's value and halfway between neighbours, plus specials, seeded.
std::vector<float> probes() {
  std::vector<float> v;
  for (uint32_t h = 0; h < 0x10000; h += 7) {
    const float f = float_from_half(static_cast<uint16_t>(h));
    v.push_back(f);
    v.push_back(from_bits(bits_of(f) + 0x1000));  // a half's ulp is 2^13 float ulps: ties
    v.push_back(from_bits(bits_of(f) + 0x1001));
  }
  for (const uint32_t b : {0x7f800001U, 0x7fc00000U, 0xffc12345U, 0x7f800000U, 0xff800000U,
                           0x00000001U, 0x33000000U, 0x477ff000U, 0x477fefffU, 0x80000000U}) {
    v.push_back(from_bits(b));
  }
  v.resize(v.size() - v.size() % 16 + 13);  // a tail of 13
  return v;
}

TEST(Float16Conversions, RowsGiveCoresBitsForEveryElement) {
  std::vector<Float16> halves(0x10000 + 5);
  for (size_t i = 0; i < halves.size(); ++i) halves[i].bits = static_cast<uint16_t>(i & 0xffff);
  std::vector<float> wide(halves.size());
  halves_to_floats(halves.data(), wide.data(), halves.size());
  for (size_t i = 0; i < halves.size(); ++i) {
    ASSERT_EQ(bits_of(wide[i]), bits_of(float_from_half(halves[i].bits))) << i;
  }
  const std::vector<float> f = probes();
  std::vector<Float16> narrow(f.size());
  floats_to_halves(f.data(), narrow.data(), f.size());
  std::vector<float> rounded = f;
  round_through_halves(rounded.data(), rounded.size());
  for (size_t i = 0; i < f.size(); ++i) {
    const uint16_t expected = half_from_float(f[i]);
    ASSERT_EQ(narrow[i].bits, expected) << i << ": " << f[i];
    ASSERT_EQ(bits_of(rounded[i]), bits_of(float_from_half(expected))) << i << ": " << f[i];
  }
}

}  // namespace
}  // namespace footprint::runtime::kernels
