// QuantizeLinear and DequantizeLinear on thousands of random operands (seeded): shapes of rank 0
// to 3 with empty and odd extents, axes in and out of range, block sizes that fit and that do
// not, zero points of the right and wrong type and shape, scales that are zero, negative, NaN or
// infinite. Each case must either match the spec's formula element by element (computed here by
// indexing, apart from the kernel's runs) or be refused with one footprint::Error naming the
// node, never anything else, and exactly when the spec says the operands do not fit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "runtime/prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

const std::vector<DType> kTypes{DType::int8,   DType::uint8, DType::int16,
                                DType::uint16, DType::int4,  DType::uint4};

struct Range {
  int lo;
  int hi;
};
Range range_of(DType t) {
  switch (t) {
    case DType::int8:
      return {-128, 127};
    case DType::uint8:
      return {0, 255};
    case DType::int16:
      return {-32768, 32767};
    case DType::uint16:
      return {0, 65535};
    case DType::int4:
      return {-8, 7};
    default:
      return {0, 15};
  }
}

// Integer element i of a tensor of type t, and writing one.
int get(const Tensor& x, size_t i) {
  const auto* b = reinterpret_cast<const uint8_t*>(x.bytes.data());
  switch (x.dtype) {
    case DType::int8:
      return reinterpret_cast<const int8_t*>(b)[i];
    case DType::uint8:
      return b[i];
    case DType::int16:
      return reinterpret_cast<const int16_t*>(b)[i];
    case DType::uint16:
      return reinterpret_cast<const uint16_t*>(b)[i];
    default: {
      const int v = (b[i / 2] >> ((i % 2) * 4)) & 0xF;
      return x.dtype == DType::int4 ? (v ^ 8) - 8 : v;
    }
  }
}
Tensor ints(DType t, const Ints& dims, std::mt19937& gen) {
  Tensor x{t, dims, {}};
  x.bytes.resize(dtype_storage_bytes(t, x.numel()).value_or(0));
  for (std::byte& b : x.bytes) b = static_cast<std::byte>(gen() & 0xFF);
  return x;
}

Ints random_dims(std::mt19937& gen, size_t rank) {
  Ints d;
  for (size_t i = 0; i < rank; ++i) d.push_back(static_cast<int64_t>(gen() % 6));
  return d;
}

float random_scale(std::mt19937& gen) {
  switch (gen() % 40) {
    case 0:
      return 0;
    case 1:
      return -0.5F;
    case 2:
      return std::numeric_limits<float>::quiet_NaN();
    case 3:
      return std::numeric_limits<float>::infinity();
    default:
      return 0.05F + static_cast<float>(gen() % 200) / 100.0F;
  }
}

size_t numel(const Ints& d) {
  size_t n = 1;
  for (int64_t e : d) n *= static_cast<size_t>(e);
  return n;
}

struct Case {
  bool quantize = true;
  Ints x_dims, scale_dims, zp_dims;
  bool has_zp = false;
  DType x_type = DType::float32, zp_type = DType::uint8;
  int64_t axis = 1, block = 0;
};

// Which scale element element `e` of x uses, or nullopt when the operands do not fit (the
// spec's rules, written from its text).
struct Plan {
  bool fits = false;
  std::vector<size_t> scale_index;  // per element of x
};

Plan plan(const Case& c, const std::vector<float>& scales) {
  Plan p;
  for (float s : scales) {
    if (!(s > 0) || !std::isfinite(s)) return p;
  }
  const DType quantized = c.quantize ? (c.has_zp ? c.zp_type : DType::uint8) : c.x_type;
  if (c.has_zp && c.zp_type != quantized) return p;
  const size_t n = numel(c.x_dims);
  const bool single = numel(c.scale_dims) == 1;
  if (c.has_zp) {
    const bool zp_single = numel(c.zp_dims) == 1;
    if (!(single && zp_single) && c.zp_dims != c.scale_dims) return p;
  }
  if (c.block < 0) return p;
  if (single) {
    p.fits = true;
    p.scale_index.assign(n, 0);
    return p;
  }
  const auto r = static_cast<int64_t>(c.x_dims.size());
  if (c.axis < -r || c.axis >= r) return p;
  const auto axis = static_cast<size_t>(c.axis < 0 ? c.axis + r : c.axis);
  if (c.block == 0) {
    if (c.scale_dims.size() != 1 || c.scale_dims[0] != c.x_dims[axis]) return p;
  } else {
    if (c.scale_dims.size() != c.x_dims.size()) return p;
    for (size_t d = 0; d < c.x_dims.size(); ++d) {
      const int64_t want = d == axis ? (c.x_dims[d] + c.block - 1) / c.block : c.x_dims[d];
      if (c.scale_dims[d] != want) return p;
    }
  }
  for (size_t e = 0; e < n; ++e) {
    // The multi-index of e, then the scale's.
    size_t rest = e;
    std::vector<size_t> idx(c.x_dims.size());
    for (size_t d = c.x_dims.size(); d-- > 0;) {
      idx[d] = rest % static_cast<size_t>(c.x_dims[d]);
      rest /= static_cast<size_t>(c.x_dims[d]);
    }
    if (c.block == 0) {
      p.scale_index.push_back(idx[axis]);
      continue;
    }
    idx[axis] /= static_cast<size_t>(c.block);
    size_t s = 0;
    for (size_t d = 0; d < idx.size(); ++d) s = s * static_cast<size_t>(c.scale_dims[d]) + idx[d];
    p.scale_index.push_back(s);
  }
  p.fits = true;
  return p;
}

Case random_case(std::mt19937& gen) {
  Case c;
  c.quantize = gen() % 2 == 0;
  c.x_dims = random_dims(gen, gen() % 4);
  c.axis = static_cast<int64_t>(gen() % 9) - 4;
  const bool blocked = gen() % 3 == 0;
  c.block = blocked ? static_cast<int64_t>(gen() % 5) - (gen() % 8 == 0 ? 3 : 0) : 0;
  const auto r = static_cast<int64_t>(c.x_dims.size());
  const bool fitting_axis = r > 0 && gen() % 4 != 0;
  const size_t ax = fitting_axis ? static_cast<size_t>((c.axis % r + r) % r) : 0;
  switch (gen() % 5) {
    case 0:  // per tensor
      c.scale_dims = gen() % 2 == 0 ? Ints{} : Ints{1};
      break;
    case 1:  // per axis, mostly of the axis' extent
      c.scale_dims = {fitting_axis && gen() % 4 != 0 ? c.x_dims[ax]
                                                     : static_cast<int64_t>(gen() % 6)};
      break;
    case 2:
    case 3:  // blocked, mostly fitting
      c.scale_dims = c.x_dims;
      if (fitting_axis && c.block > 0) {
        c.scale_dims[ax] = (c.x_dims[ax] + c.block - 1) / c.block + (gen() % 6 == 0 ? 1 : 0);
      }
      break;
    default:
      c.scale_dims = random_dims(gen, gen() % 3);
  }
  c.has_zp = gen() % 3 != 0;
  c.zp_dims = gen() % 8 == 0 ? random_dims(gen, 1) : c.scale_dims;
  const DType q = kTypes[gen() % kTypes.size()];
  if (c.quantize) {
    c.zp_type = q;
  } else {
    c.x_type = q;
    c.zp_type = gen() % 10 == 0 ? kTypes[gen() % kTypes.size()] : q;
  }
  return c;
}

TEST(QuantizationFuzz, RandomOperandsMatchTheFormulaOrAreRefusedByName) {
  std::mt19937 gen(20261206);
  int ran = 0;
  int refused = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    const Case c = random_case(gen);
    std::vector<float> scales(numel(c.scale_dims));
    for (float& s : scales) s = random_scale(gen);
    Tensor x = c.quantize ? random_floats(c.x_dims, gen()) : ints(c.x_type, c.x_dims, gen);
    if (c.quantize) {
      // Some elements far beyond the range, to saturate.
      auto* f = reinterpret_cast<float*>(x.bytes.data());
      for (size_t i = 0; i < x.numel(); i += 3) f[i] *= 70000;
    }
    const Tensor zp = ints(c.zp_type, c.zp_dims, gen);
    std::vector<std::optional<Tensor>> in{x, floats(c.scale_dims, scales)};
    if (c.has_zp) in.emplace_back(zp);
    std::vector<Wire> attrs{attr("axis", c.axis)};
    if (c.block != 0) attrs.push_back(attr("block_size", c.block));
    const Plan want = plan(c, scales);
    const std::string op = c.quantize ? "QuantizeLinear" : "DequantizeLinear";
    const std::string what = op + " case " + std::to_string(iteration);
    std::string error;
    std::optional<PreparedRun> k;
    try {
      k.emplace(op, in, attrs, 21);
      k->threads(1 + iteration % 2);
      k->run();
    } catch (const Error& e) {
      error = e.what();
    }
    if (!want.fits) {
      ASSERT_NE(error, "") << what << ": operands that do not fit were accepted";
      EXPECT_NE(error.find("node 'n0' (" + op + "): "), std::string::npos) << what << ": " << error;
      EXPECT_EQ(error.find('\n'), std::string::npos) << what;
      ++refused;
      continue;
    }
    ASSERT_EQ(error, "") << what;
    ++ran;
    const Tensor& y = k->out(0);
    for (size_t e = 0; e < x.numel(); ++e) {
      const size_t s = want.scale_index[e];
      const float scale = scales[s];
      const int z = c.has_zp ? get(zp, numel(c.zp_dims) == 1 ? 0 : s) : 0;
      if (c.quantize) {
        const float xv = reinterpret_cast<const float*>(x.bytes.data())[e];
        const Range r = range_of(y.dtype);
        const float q = std::nearbyint(xv / scale) + static_cast<float>(z);
        const int expected =
            static_cast<int>(std::clamp(q, static_cast<float>(r.lo), static_cast<float>(r.hi)));
        ASSERT_EQ(get(y, e), expected) << what << " element " << e;
      } else {
        const float expected = static_cast<float>(get(x, e) - z) * scale;
        ASSERT_EQ(y.floats()[e], expected) << what << " element " << e;
      }
    }
  }
  // The generator reaches both sides often.
  EXPECT_GT(ran, 800);
  EXPECT_GT(refused, 800);
}

}  // namespace
}  // namespace footprint::testing
