// com.microsoft's QLinear element, pool and concat ops on thousands of random operands (seeded):
// int8 and uint8, broadcast shapes, pool windows in both layouts, softmax axes in and out of
// range, scales that are zero, negative, NaN, infinite or of more than one element, zero points
// of the wrong type or shape or omitted, tensors of mixed types. Each case must either match the
// op's definition (dequantize, compute in double, requantize rounding half to even and
// saturating; computed here by indexing, apart from the kernels' loops) or be refused with one
// footprint::Error naming the node, never anything else, and exactly when the operands do not
// fit. onnxruntime arranges the float arithmetic its own way (graph/ops and the kernel say how),
// so an output may differ by one step where the exact value is within a hair of a rounding tie,
// and nowhere else.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "runtime/prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

const char* const kOps[] = {
    "QLinearAdd",     "QLinearMul",         "QLinearSigmoid",           "QLinearLeakyRelu",
    "QLinearSoftmax", "QLinearAveragePool", "QLinearGlobalAveragePool", "QLinearConcat"};

size_t numel(const Ints& d) {
  size_t n = 1;
  for (int64_t e : d) n *= static_cast<size_t>(e);
  return n;
}

int get(const Tensor& t, size_t i) {
  const auto b = std::to_integer<uint8_t>(t.bytes[i]);
  return t.dtype == DType::int8 ? static_cast<int8_t>(b) : b;
}

int lo_of(DType t) {
  return t == DType::int8 ? -128 : 0;
}
int hi_of(DType t) {
  return t == DType::int8 ? 127 : 255;
}

// A dequantized element, in double.
double deq(float scale, int v, int zero) {
  return static_cast<double>(scale) * (v - zero);
}

Tensor bytes(DType t, const Ints& dims, std::mt19937& gen) {
  Tensor x{t, dims, {}};
  x.bytes.resize(numel(dims));
  for (std::byte& b : x.bytes) b = static_cast<std::byte>(gen() & 0xFF);
  return x;
}

// A quantized tensor's parameters as the case gives them, and whether they fit.
struct Param {
  std::optional<Tensor> scale, zero;
  float s = 1;
  int z = 0;
  bool fits = true;
};

Param random_param(std::mt19937& gen, DType t) {
  Param p;
  switch (gen() % 30) {
    case 0:
      p.s = 0;
      p.fits = false;
      break;
    case 1:
      p.s = -0.25F;
      p.fits = false;
      break;
    case 2:
      p.s = std::numeric_limits<float>::quiet_NaN();
      p.fits = false;
      break;
    case 3:
      p.s = std::numeric_limits<float>::infinity();
      p.fits = false;
      break;
    default:
      p.s = 0.002F * static_cast<float>(1 + gen() % 500);
  }
  if (gen() % 25 == 0) {
    p.scale = floats({2}, {p.s, p.s});
    p.fits = false;
  } else {
    p.scale = floats(gen() % 3 == 0 ? Ints{1} : Ints{}, {p.s});
  }
  switch (gen() % 12) {
    case 0:  // omitted: 0
      break;
    case 1: {  // of the other type
      const DType other = t == DType::int8 ? DType::uint8 : DType::int8;
      p.zero = bytes(other, {}, gen);
      p.fits = false;
      break;
    }
    case 2:  // two elements
      p.zero = bytes(t, {2}, gen);
      p.fits = false;
      break;
    default:
      p.zero = bytes(t, gen() % 4 == 0 ? Ints{1} : Ints{}, gen);
      p.z = get(*p.zero, 0);
  }
  return p;
}

// Whether `got` is the exact value v rounded half to even and saturated, or one step off where v
// is within a hair of a tie: float arithmetic arranged as onnxruntime's (QLinearAdd's terms of up
// to 1e5 cancelling, a pool's float sum) is that close.
bool matches(int got, double v, DType t) {
  const auto sat = [&](double r) {
    return static_cast<int>(std::min<double>(hi_of(t), std::max<double>(lo_of(t), r)));
  };
  const int exact = sat(std::nearbyint(v));
  if (got == exact) return true;
  const double frac = v - std::floor(v);
  return std::fabs(frac - 0.5) < 0.02 && (got == sat(std::floor(v)) || got == sat(std::ceil(v)));
}

Ints random_dims(std::mt19937& gen, size_t rank, int64_t most) {
  Ints d;
  for (size_t i = 0; i < rank; ++i) d.push_back(1 + static_cast<int64_t>(gen() % most));
  return d;
}

// The index into a tensor of `dims` broadcast (numpy) to `out`'s element e.
size_t broadcast_index(const Ints& out, const Ints& dims, size_t e) {
  size_t at = 0;
  size_t stride = 1;
  size_t rest = e;
  for (size_t d = out.size(); d-- > 0;) {
    const auto i = rest % static_cast<size_t>(out[d]);
    rest /= static_cast<size_t>(out[d]);
    const size_t offset = out.size() - dims.size();
    if (d < offset) continue;
    const auto extent = static_cast<size_t>(dims[d - offset]);
    if (extent != 1) at += i * stride;
    stride *= extent;
  }
  return at;
}

struct Case {
  std::string op;
  std::vector<std::optional<Tensor>> in;
  std::vector<Wire> attrs;
  bool fits = true;
  DType t = DType::uint8;
  // Computes the exact value of output element e (given the output's extents).
  std::function<double(const Ints& out, size_t e)> want;
  bool copy_exact = false;  // want gives the element itself (a concat's copied tensor)
};

void push(Case& c, const Param& p) {
  c.in.push_back(p.scale);
  c.in.push_back(p.zero);
  c.fits = c.fits && p.fits;
}

// The operands of an op from X to Y: X, X_scale, X_zero_point, Y_scale and, when it has one or
// at random, Y_zero_point (omitted, it reads 0).
void push_one_to_one(Case& c, const Tensor& x, const Param& px, const Param& py,
                     std::mt19937& gen) {
  c.in.push_back(x);
  push(c, px);
  c.in.push_back(py.scale);
  c.fits = c.fits && py.fits;
  if (py.zero || gen() % 2) c.in.push_back(py.zero);
}

Case binary_case(std::mt19937& gen, bool add) {
  Case c;
  c.op = add ? "QLinearAdd" : "QLinearMul";
  c.t = gen() % 2 ? DType::int8 : DType::uint8;
  const Ints out = random_dims(gen, 1 + gen() % 3, 4);
  auto operand = [&] {
    Ints d(out.begin() + static_cast<std::ptrdiff_t>(gen() % out.size()), out.end());
    for (int64_t& e : d) {
      if (gen() % 3 == 0) e = 1;
    }
    return d;
  };
  const Ints ad = operand();
  const Ints bd = operand();
  const DType bt = gen() % 20 == 0 ? (c.t == DType::int8 ? DType::uint8 : DType::int8) : c.t;
  c.fits = bt == c.t;
  const Tensor a = bytes(c.t, ad, gen);
  const Tensor b = bytes(bt, bd, gen);
  const Param pa = random_param(gen, c.t);
  const Param pb = random_param(gen, c.t);
  const Param pc = random_param(gen, c.t);
  c.in.push_back(a);
  push(c, pa);
  c.in.push_back(b);
  push(c, pb);
  c.in.push_back(pc.scale);
  c.fits = c.fits && pc.fits;
  if (pc.zero || gen() % 2) c.in.push_back(pc.zero);
  c.want = [=](const Ints& o, size_t e) {
    const double x = deq(pa.s, get(a, broadcast_index(o, ad, e)), pa.z);
    const double y = deq(pb.s, get(b, broadcast_index(o, bd, e)), pb.z);
    return (add ? x + y : x * y) / pc.s + pc.z;
  };
  return c;
}

Case unary_case(std::mt19937& gen, const std::string& op) {
  Case c;
  c.op = op;
  c.t = gen() % 2 ? DType::int8 : DType::uint8;
  const Ints dims = random_dims(gen, 1 + gen() % 3, 5);
  const Tensor x = bytes(c.t, dims, gen);
  const Param px = random_param(gen, c.t);
  const Param py = random_param(gen, c.t);
  push_one_to_one(c, x, px, py, gen);
  if (op == "QLinearSigmoid") {
    c.want = [=](const Ints& /*o*/, size_t e) {
      const double v = deq(px.s, get(x, e), px.z);
      return 1 / (1 + std::exp(-v)) / py.s + py.z;
    };
  } else if (op == "QLinearLeakyRelu") {
    const float alpha = static_cast<float>(gen() % 100) / 50.0F;
    c.attrs.push_back(attr_float("alpha", alpha));
    c.want = [=](const Ints& /*o*/, size_t e) {
      const double v = deq(px.s, get(x, e), px.z);
      return (v >= 0 ? v : static_cast<double>(alpha) * v) / py.s + py.z;
    };
  } else {
    // Softmax: opset 12 or 13 (or none: refused), an axis mostly in range.
    const int64_t rank = static_cast<int64_t>(dims.size());
    const int64_t opset = gen() % 2 ? 12 : 13;
    const bool has_opset = gen() % 15 != 0;
    if (has_opset) c.attrs.push_back(attr("opset", opset));
    std::optional<int64_t> axis;
    if (gen() % 4 != 0) {
      axis = static_cast<int64_t>(gen() % (2 * rank + 2)) - rank - 1;
      c.attrs.push_back(attr("axis", *axis));
    }
    const int64_t a = axis.value_or(opset < 13 ? 1 : -1);
    c.fits = c.fits && has_opset && a >= -rank && a < rank;
    const auto ax = static_cast<size_t>(a < 0 ? a + rank : a);
    // onnxruntime's output scale: the integer part of 1 / y_scale.
    const double scale = std::floor(1.0F / py.s);
    c.want = [=](const Ints& o, size_t e) {
      // The elements of e's row: before 13 every element from the axis on with e's leading
      // index; from 13 those differing from e on the axis alone.
      size_t inner = 1;
      for (size_t d = ax + 1; d < o.size(); ++d) inner *= static_cast<size_t>(o[d]);
      const auto extent = static_cast<size_t>(o[ax]);
      std::vector<size_t> row;
      if (opset < 13) {
        const size_t len = extent * inner;
        for (size_t i = 0; i < len; ++i) row.push_back(e / len * len + i);
      } else {
        const size_t base = e / (extent * inner) * extent * inner + e % inner;
        for (size_t i = 0; i < extent; ++i) row.push_back(base + i * inner);
      }
      double sum = 0;
      for (size_t i : row) sum += std::exp(deq(px.s, get(x, i), 0));
      return std::exp(deq(px.s, get(x, e), 0)) / sum * scale + py.z;
    };
  }
  return c;
}

Case pool_case(std::mt19937& gen, bool global) {
  Case c;
  c.op = global ? "QLinearGlobalAveragePool" : "QLinearAveragePool";
  c.t = gen() % 2 ? DType::int8 : DType::uint8;
  const size_t nd = 1 + gen() % 3;
  const bool last = nd == 2 && gen() % 2 == 0;  // inference reads channels-last in 2-D only
  Ints nchw = random_dims(gen, 2 + nd, 5);
  Ints kernel, strides, pads(2 * nd);
  for (size_t i = 0; i < nd; ++i) {
    kernel.push_back(1 + static_cast<int64_t>(gen() % 3));
    strides.push_back(1 + static_cast<int64_t>(gen() % 2));
    pads[i] = static_cast<int64_t>(gen() % static_cast<unsigned>(kernel[i]));
    pads[i + nd] = static_cast<int64_t>(gen() % static_cast<unsigned>(kernel[i]));
    nchw[2 + i] = std::max(nchw[2 + i], kernel[i] - pads[i] - pads[i + nd]);
  }
  const bool include_pad = gen() % 2 == 0;
  if (last) c.attrs.push_back(attr("channels_last", int64_t{1}));
  if (!global) {
    c.attrs.push_back(attr("kernel_shape", kernel));
    c.attrs.push_back(attr("strides", strides));
    c.attrs.push_back(attr("pads", pads));
    c.attrs.push_back(attr("count_include_pad", int64_t{include_pad ? 1 : 0}));
  }
  Ints stored = nchw;
  if (last) std::rotate(stored.begin() + 1, stored.begin() + 2, stored.end());
  const Tensor x = bytes(c.t, stored, gen);
  const Param px = random_param(gen, c.t);
  const Param py = random_param(gen, c.t);
  push_one_to_one(c, x, px, py, gen);
  // x's element at [n, ch, spatial...] in its layout.
  const auto at = [=](int64_t n, int64_t ch, const Ints& p) {
    int64_t s = 0;
    for (size_t i = 0; i < nd; ++i) s = s * nchw[2 + i] + p[i];
    const int64_t image = numel(Ints(nchw.begin() + 2, nchw.end()));
    const int64_t channels = nchw[1];
    const int64_t i = last ? (n * image + s) * channels + ch : (n * channels + ch) * image + s;
    return get(x, static_cast<size_t>(i));
  };
  c.want = [=](const Ints& o_stored, size_t e) {
    Ints o = o_stored;  // as NCHW
    if (last) std::rotate(o.begin() + 1, o.end() - 1, o.end());
    // e's multi-index in the stored layout, then as NCHW.
    Ints idx(o_stored.size());
    size_t rest = e;
    for (size_t d = o_stored.size(); d-- > 0;) {
      idx[d] = static_cast<int64_t>(rest % static_cast<size_t>(o_stored[d]));
      rest /= static_cast<size_t>(o_stored[d]);
    }
    if (last) std::rotate(idx.begin() + 1, idx.end() - 1, idx.end());
    double sum = 0;
    int64_t inside = 0;
    int64_t kernel_size = 1;
    Ints begin(nd), end(nd);
    for (size_t i = 0; i < nd; ++i) {
      const int64_t k = global ? nchw[2 + i] : kernel[i];
      const int64_t start = global ? 0 : idx[2 + i] * strides[i] - pads[i];
      begin[i] = std::max<int64_t>(start, 0);
      end[i] = std::min(start + k, nchw[2 + i]);
      kernel_size *= k;
    }
    Ints p = begin;
    while (true) {
      sum += deq(px.s, at(idx[0], idx[1], p), px.z);
      ++inside;
      size_t d = nd;
      while (d-- > 0) {
        if (++p[d] < end[d]) break;
        p[d] = begin[d];
      }
      if (d == static_cast<size_t>(-1)) break;
    }
    const int64_t count = include_pad && !global ? kernel_size : inside;
    return sum / static_cast<double>(count) / py.s + py.z;
  };
  return c;
}

Case concat_case(std::mt19937& gen) {
  Case c;
  c.op = "QLinearConcat";
  c.t = gen() % 2 ? DType::int8 : DType::uint8;
  const size_t rank = 1 + gen() % 3;
  const Ints base = random_dims(gen, rank, 4);
  const auto axis = static_cast<size_t>(gen() % rank);
  const bool negative = gen() % 2 == 0;
  c.attrs.push_back(attr("axis", negative ? static_cast<int64_t>(axis) - static_cast<int64_t>(rank)
                                          : static_cast<int64_t>(axis)));
  const Param py = random_param(gen, c.t);
  c.in.push_back(py.scale);
  c.in.push_back(py.zero ? py.zero : bytes(c.t, {}, gen));  // Y_zero_point is required
  const int yz = get(*c.in.back(), 0);
  c.fits = py.fits;
  struct Part {
    Tensor x;
    Param p;
    bool copied;
  };
  std::vector<Part> parts;
  const size_t count = 1 + gen() % 3;
  for (size_t k = 0; k < count; ++k) {
    Ints d = base;
    d[axis] = 1 + static_cast<int64_t>(gen() % 3);
    Part part{bytes(c.t, d, gen), random_param(gen, c.t), false};
    if (gen() % 3 == 0 && py.fits) {  // quantized as Y: copied
      part.p.scale = py.scale;
      part.p.s = py.s;
      part.p.zero = *c.in[1];
      part.p.z = yz;
      part.p.fits = true;
      part.copied = true;
    }
    c.in.push_back(part.x);
    push(c, part.p);
    parts.push_back(part);
  }
  const float ys = py.s;
  c.want = [=](const Ints& o, size_t e) {
    size_t inner = 1;
    for (size_t d = axis + 1; d < o.size(); ++d) inner *= static_cast<size_t>(o[d]);
    const size_t block = static_cast<size_t>(o[axis]) * inner;
    const size_t outer = e / block;
    size_t within = e % block;
    for (const Part& part : parts) {
      const size_t b = static_cast<size_t>(part.x.dims[axis]) * inner;
      if (within < b) {
        const int v = get(part.x, outer * b + within);
        if (part.copied) return static_cast<double>(v);
        return deq(part.p.s, v, part.p.z) / ys + yz;
      }
      within -= b;
    }
    return 0.0;
  };
  return c;
}

Case random_case(std::mt19937& gen) {
  const std::string op = kOps[gen() % std::size(kOps)];
  if (op == "QLinearAdd" || op == "QLinearMul") return binary_case(gen, op == "QLinearAdd");
  if (op == "QLinearAveragePool" || op == "QLinearGlobalAveragePool") {
    return pool_case(gen, op == "QLinearGlobalAveragePool");
  }
  if (op == "QLinearConcat") return concat_case(gen);
  return unary_case(gen, op);
}

TEST(QLinearFuzz, RandomOperandsMatchTheDefinitionOrAreRefusedByName) {
  std::mt19937 gen(20261206);
  int ran = 0;
  int refused = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    const Case c = random_case(gen);
    const std::string what = c.op + " case " + std::to_string(iteration);
    std::string error;
    std::optional<PreparedRun> k;
    try {
      k.emplace("com.microsoft::" + c.op, c.in, c.attrs, 18);
      // Scales and zero points are constants (tables built when preparing) in half the cases.
      if (iteration % 2 != 0) k->constants({});
      k->threads(1 + iteration % 3 / 2);
      k->run();
    } catch (const Error& e) {
      error = e.what();
    }
    if (!c.fits) {
      ASSERT_NE(error, "") << what << ": operands that do not fit were accepted";
      EXPECT_NE(error.find("node 'n0' (" + c.op + "): "), std::string::npos)
          << what << ": " << error;
      EXPECT_EQ(error.find('\n'), std::string::npos) << what;
      ++refused;
      continue;
    }
    ASSERT_EQ(error, "") << what;
    EXPECT_EQ(k->allocations(), 0u) << what;
    ++ran;
    const Tensor& y = k->out(0);
    ASSERT_EQ(y.dtype, c.t) << what;
    for (size_t e = 0; e < y.numel(); ++e) {
      const double v = c.want(y.dims, e);
      ASSERT_TRUE(matches(get(y, e), v, c.t))
          << what << " element " << e << ": got " << get(y, e) << ", exact value " << v;
    }
  }
  // The generator reaches both sides often.
  EXPECT_GT(ran, 1000);
  EXPECT_GT(refused, 600);
}

}  // namespace
}  // namespace footprint::testing
