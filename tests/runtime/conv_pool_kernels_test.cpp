// Sliding-window kernels against naive reference loops on small random tensors: Conv (groups,
// dilations, strides, asymmetric and SAME pads, 1-3 spatial dims), ConvTranspose (groups,
// strides, output_padding, output_shape, dilations), MaxPool/AveragePool (oneDNN and the loop:
// ceil_mode, count_include_pad, indices, 4 spatial dims, uint8), the global pools and LRN.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>

#include "footprint/runtime/op_kernels.hpp"
#include "runtime/prepared_kernel_run.hpp"

namespace footprint::testing {
namespace {

// Row-major coordinates of `flat` within `extents`.
Ints coords(int64_t flat, const Ints& extents) {
  Ints c(extents.size());
  for (size_t i = extents.size(); i-- > 0;) {
    c[i] = flat % extents[i];
    flat /= extents[i];
  }
  return c;
}

int64_t product(const Ints& v) {
  int64_t p = 1;
  for (int64_t e : v) p *= e;
  return p;
}

Ints tail(const Ints& v, size_t from) {
  return {v.begin() + static_cast<long>(from), v.end()};
}

struct WindowSpec {
  Ints strides, dilations, pad_begin;
};

// y[n, m, o] = b[m] + sum over c of the group and k of x[n, c, o*s - p + k*d] * w[m, c, k].
std::vector<float> ref_conv(const Tensor& xt, const Tensor& wt, const std::optional<Tensor>& bt,
                            const Ints& ydims, int64_t group, const WindowSpec& s) {
  const auto x = xt.floats();
  const auto w = wt.floats();
  const Ints xs = tail(xt.dims, 2), ks = tail(wt.dims, 2), ys = tail(ydims, 2);
  const int64_t n_batch = xt.dims[0], c_in = xt.dims[1], m_out = ydims[1];
  const int64_t cg = c_in / group, mg = m_out / group;
  std::vector<float> y(static_cast<size_t>(product(ydims)));
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t m = 0; m < m_out; ++m) {
      const int64_t g = m / mg;
      for (int64_t oi = 0; oi < product(ys); ++oi) {
        const Ints o = coords(oi, ys);
        double acc = bt ? bt->floats()[static_cast<size_t>(m)] : 0.0;
        for (int64_t c = 0; c < cg; ++c) {
          for (int64_t ki = 0; ki < product(ks); ++ki) {
            const Ints k = coords(ki, ks);
            int64_t at = 0;
            bool inside = true;
            for (size_t d = 0; d < xs.size(); ++d) {
              const int64_t p = o[d] * s.strides[d] - s.pad_begin[d] + k[d] * s.dilations[d];
              inside = inside && p >= 0 && p < xs[d];
              at = at * xs[d] + p;
            }
            if (!inside) continue;
            acc += x[static_cast<size_t>((n * c_in + g * cg + c) * product(xs) + at)] *
                   w[static_cast<size_t>((m * cg + c) * product(ks) + ki)];
          }
        }
        y[static_cast<size_t>((n * m_out + m) * product(ys) + oi)] = static_cast<float>(acc);
      }
    }
  }
  return y;
}

// Scatter form: every x[n, c, i] * w[c, m, k] lands on y[n, g*M/group + m, i*s - p + k*d].
std::vector<float> ref_deconv(const Tensor& xt, const Tensor& wt, const std::optional<Tensor>& bt,
                              const Ints& ydims, int64_t group, const WindowSpec& s) {
  const auto x = xt.floats();
  const auto w = wt.floats();
  const Ints xs = tail(xt.dims, 2), ks = tail(wt.dims, 2), ys = tail(ydims, 2);
  const int64_t n_batch = xt.dims[0], c_in = xt.dims[1], m_out = ydims[1];
  const int64_t cg = c_in / group, mg = m_out / group;
  std::vector<double> y(static_cast<size_t>(product(ydims)), 0.0);
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t c = 0; c < c_in; ++c) {
      const int64_t g = c / cg;
      for (int64_t ii = 0; ii < product(xs); ++ii) {
        const Ints i = coords(ii, xs);
        const double xv = x[static_cast<size_t>((n * c_in + c) * product(xs) + ii)];
        for (int64_t m = 0; m < mg; ++m) {
          for (int64_t ki = 0; ki < product(ks); ++ki) {
            const Ints k = coords(ki, ks);
            int64_t at = 0;
            bool inside = true;
            for (size_t d = 0; d < xs.size(); ++d) {
              const int64_t p = i[d] * s.strides[d] - s.pad_begin[d] + k[d] * s.dilations[d];
              inside = inside && p >= 0 && p < ys[d];
              at = at * ys[d] + p;
            }
            if (!inside) continue;
            y[static_cast<size_t>((n * m_out + g * mg + m) * product(ys) + at)] +=
                xv * w[static_cast<size_t>((c * mg + m) * product(ks) + ki)];
          }
        }
      }
    }
  }
  std::vector<float> out(y.size());
  const int64_t plane = product(ys);
  for (size_t i = 0; i < y.size(); ++i) {
    const auto m = static_cast<size_t>((static_cast<int64_t>(i) / plane) % m_out);
    out[i] = static_cast<float>(y[i] + (bt ? bt->floats()[m] : 0.0f));
  }
  return out;
}

// ---- Conv

struct ConvCase {
  Ints x{}, w{};
  int64_t group = 1;
  Ints strides{}, dilations{}, pads{};  // empty: the attribute is left out (defaults)
  std::string auto_pad{};
  bool bias = true;
};

void check_conv(const ConvCase& c, unsigned seed) {
  SCOPED_TRACE("conv seed " + std::to_string(seed));
  const size_t nd = c.x.size() - 2;
  const Tensor x = random_floats(c.x, seed);
  const Tensor w = random_floats(c.w, seed + 1);
  std::optional<Tensor> b;
  if (c.bias) b = random_floats({c.w[0]}, seed + 2);
  std::vector<Wire> attrs{attr("group", c.group)};
  if (!c.strides.empty()) attrs.push_back(attr("strides", c.strides));
  if (!c.dilations.empty()) attrs.push_back(attr("dilations", c.dilations));
  if (!c.pads.empty()) attrs.push_back(attr("pads", c.pads));
  if (!c.auto_pad.empty()) attrs.push_back(attr("auto_pad", std::string_view(c.auto_pad)));
  std::vector<std::optional<Tensor>> inputs{x, w};
  if (b) inputs.push_back(b);
  PreparedRun k("Conv", inputs, attrs);
  k.run();
  // Depthwise 2-D convolutions run as a direct loop (depthwise_conv.hpp), the rest in oneDNN;
  // both prepare their state once (the loop its geometry, from the decoded window).
  EXPECT_TRUE(k.has_state());
  WindowSpec s{c.strides.empty() ? Ints(nd, 1) : c.strides,
               c.dilations.empty() ? Ints(nd, 1) : c.dilations, Ints(nd, 0)};
  const Ints& ydims = k.out(0).dims;
  for (size_t i = 0; i < nd; ++i) {
    if (!c.pads.empty()) s.pad_begin[i] = c.pads[i];
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      const int64_t eff = (c.w[i + 2] - 1) * s.dilations[i] + 1;
      const int64_t total =
          std::max<int64_t>(0, (ydims[i + 2] - 1) * s.strides[i] + eff - c.x[i + 2]);
      s.pad_begin[i] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
  }
  expect_close(k.out(0).floats(), ref_conv(x, w, b, ydims, c.group, s));
}

TEST(ConvKernels, MatchesTheReferenceAcrossAttributes) {
  const std::vector<ConvCase> cases{
      {.x = {1, 3, 7, 7}, .w = {4, 3, 3, 3}},
      // groups, strides, dilations, asymmetric pads
      {.x = {2, 4, 9, 8},
       .w = {6, 2, 3, 2},
       .group = 2,
       .strides = {2, 1},
       .dilations = {1, 2},
       .pads = {1, 0, 2, 1}},
      // depthwise: a partial block of channels, several blocks and images, strides, dilations,
      // asymmetric and SAME pads, 5x5, no bias
      {.x = {1, 6, 8, 8}, .w = {6, 1, 3, 3}, .group = 6, .pads = {1, 1, 1, 1}},
      {.x = {2, 20, 9, 11},
       .w = {20, 1, 3, 3},
       .group = 20,
       .strides = {2, 2},
       .pads = {1, 1, 1, 1}},
      {.x = {1, 33, 7, 7},
       .w = {33, 1, 5, 5},
       .group = 33,
       .dilations = {2, 1},
       .pads = {2, 0, 3, 1},
       .bias = false},
      {.x = {1, 16, 6, 5},
       .w = {16, 1, 3, 3},
       .group = 16,
       .strides = {2, 2},
       .auto_pad = "SAME_UPPER"},
      // rows longer than one vector (21 = 16 + 5), computed 4 at a time plus a remainder
      {.x = {1, 3, 9, 21}, .w = {3, 1, 3, 3}, .group = 3, .pads = {1, 1, 1, 1}},
      // stride 2 splits each packed row into even and odd columns: even and odd widths, left
      // pads 0 to 3 (which phase each parity lands in), rows of several vectors
      {.x = {1, 8, 12, 34}, .w = {8, 1, 3, 3}, .group = 8, .strides = {2, 2}, .pads = {1, 0, 1, 1}},
      {.x = {1, 4, 15, 40}, .w = {4, 1, 5, 5}, .group = 4, .strides = {2, 2}, .pads = {2, 2, 2, 2}},
      {.x = {1, 4, 9, 17}, .w = {4, 1, 7, 7}, .group = 4, .strides = {2, 2}, .pads = {3, 3, 3, 3}},
      {.x = {1, 3, 10, 9},
       .w = {5, 3, 3, 3},
       .strides = {2, 2},
       .auto_pad = "SAME_UPPER",
       .bias = false},
      {.x = {1, 3, 10, 9}, .w = {5, 3, 4, 2}, .strides = {3, 2}, .auto_pad = "SAME_LOWER"},
      {.x = {1, 2, 9, 9}, .w = {3, 2, 3, 3}, .strides = {2, 3}, .auto_pad = "VALID"},
      // 1-D, 3-D, 1x1
      {.x = {2, 4, 11},
       .w = {4, 2, 3},
       .group = 2,
       .strides = {2},
       .dilations = {2},
       .pads = {1, 2}},
      {.x = {1, 2, 5, 6, 7},
       .w = {4, 2, 2, 3, 2},
       .strides = {1, 2, 1},
       .dilations = {1, 1, 2},
       .pads = {0, 1, 1, 1, 0, 1}},
      {.x = {1, 64, 14, 14}, .w = {32, 64, 1, 1}},
  };
  unsigned seed = 1;
  for (const ConvCase& c : cases) check_conv(c, seed += 10);
}

TEST(ConvKernels, ReportOneDnnScratchAsWorkspaceAndRunTwiceOnOneState) {
  PreparedRun k("Conv", {random_floats({1, 16, 20, 20}, 3), random_floats({16, 16, 3, 3}, 4)},
                {attr("pads", Ints{1, 1, 1, 1})});
  k.run();
  // A 3x3 convolution on plain layouts goes through im2col: its buffer is planned scratch.
  EXPECT_GT(k.workspace_bytes(), 0u);
  EXPECT_LE(k.allocations(), 16u) << "oneDNN's execute makes a few small bookkeeping blocks";
}

TEST(ConvKernels, WideWindowsRunOnBlockedLayoutsWithPackedWeights) {
  if (!__builtin_cpu_supports("avx2")) {
    GTEST_SKIP() << "oneDNN's direct blocked convolutions need AVX2; this CPU runs im2col";
  }
  runtime::set_intra_op_threads(1);
  const Tensor x = random_floats({1, 32, 10, 10}, 7);
  const Tensor w = random_floats({48, 32, 3, 3}, 8);
  const Tensor b = random_floats({48}, 9);
  const std::vector<Wire> attrs{attr("pads", Ints{1, 1, 1, 1})};
  PreparedRun packed("Conv", {x, w, b}, attrs);
  packed.run();
  const WindowSpec s{{1, 1}, {1, 1}, {1, 1}};
  expect_close(packed.out(0).floats(), ref_conv(x, w, b, {1, 48, 10, 10}, 1, s));
  ASSERT_NE(packed.state(), nullptr);
  // The weights were packed when preparing, and the row says W alone is read through them.
  EXPECT_EQ(runtime::op_registry().find("", "Conv")->packed_inputs, 0b10U);
  EXPECT_GE(packed.state()->owned_bytes(), w.bytes.size());
  // The blocked copies of the input and the output are planned scratch.
  EXPECT_GE(packed.workspace_bytes(), uint64_t{32 + 48} * 10 * 10 * sizeof(float));

  // Weights unknown when preparing (a graph input) are packed on every run, to the same result.
  PreparedRun each_run("Conv", {x, w, b}, attrs);
  each_run.constants({2}).run();
  EXPECT_EQ(each_run.out(0).floats(), packed.out(0).floats());
}

// y = x * w for a 3x3 window, stride 1, pads 1, without bias, in double: ref_conv's sums
// without its per-tap coordinate vectors, for the large convolutions below.
std::vector<float> ref_conv_3x3(const Tensor& xt, const Tensor& wt) {
  const auto x = xt.floats();
  const auto w = wt.floats();
  const int64_t c_in = xt.dims[1], h = xt.dims[2], wd = xt.dims[3], m_out = wt.dims[0];
  std::vector<float> y(static_cast<size_t>(m_out * h * wd));
  for (int64_t m = 0; m < m_out; ++m) {
    for (int64_t i = 0; i < h; ++i) {
      for (int64_t j = 0; j < wd; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < c_in; ++c) {
          for (int64_t a = 0; a < 3; ++a) {
            for (int64_t b = 0; b < 3; ++b) {
              const int64_t r = i + a - 1, q = j + b - 1;
              if (r < 0 || r >= h || q < 0 || q >= wd) continue;
              acc += static_cast<double>(x[static_cast<size_t>((c * h + r) * wd + q)]) *
                     w[static_cast<size_t>(((m * c_in + c) * 3 + a) * 3 + b)];
            }
          }
        }
        y[static_cast<size_t>((m * h + i) * wd + j)] = static_cast<float>(acc);
      }
    }
  }
  return y;
}

// [C, H, W] <-> [H, W, C] for one image.
std::vector<float> to_channels_last(const std::vector<float>& v, size_t c, size_t pixels) {
  std::vector<float> out(v.size());
  for (size_t k = 0; k < c; ++k) {
    for (size_t p = 0; p < pixels; ++p) out[p * c + k] = v[k * pixels + p];
  }
  return out;
}

// Winograd's F(2x2, 3x3) where it pays (conv_pool.cpp, winograd_conv_pd): a stride-1 3x3
// convolution with at least 64 channels each side and 28x28 output pixels. Its packed weights
// are the 4x4 transformed kernels, 16/9 the plain ones, which tells it from the direct kernel
// (packed at the plain size); the result is the convolution's, on plain and on channels-last
// tensors, and the blocked copies are planned scratch.
TEST(ConvKernels, WinogradWhereItPaysDirectElsewhere) {
  if (!__builtin_cpu_supports("avx512f")) {
    GTEST_SKIP() << "oneDNN's Winograd convolution needs AVX-512";
  }
  runtime::set_intra_op_threads(1);
  const auto packed_bytes = [](const Ints& xd, const Ints& wd, const Ints& strides) {
    PreparedRun k("Conv", {random_floats(xd, 11), random_floats(wd, 12)},
                  {attr("pads", Ints{1, 1, 1, 1}), attr("strides", strides)});
    k.run();
    return k.state() != nullptr ? k.state()->owned_bytes() : 0;
  };
  const uint64_t plain = uint64_t{64} * 64 * 9 * sizeof(float);
  EXPECT_EQ(packed_bytes({1, 64, 27, 28}, {64, 64, 3, 3}, {1, 1}), plain)
      << "fewer than 28x28 output pixels: direct";
  EXPECT_EQ(packed_bytes({1, 64, 56, 56}, {64, 64, 3, 3}, {2, 2}), plain) << "stride 2: direct";
  EXPECT_EQ(packed_bytes({1, 32, 28, 28}, {64, 32, 3, 3}, {1, 1}), plain / 2)
      << "32 input channels: direct";

  const Tensor x = random_floats({1, 64, 28, 28}, 14);
  const Tensor w = random_floats({64, 64, 3, 3}, 15);
  const std::vector<float> want = ref_conv_3x3(x, w);
  PreparedRun plain_run("Conv", {x, w}, {attr("pads", Ints{1, 1, 1, 1})});
  plain_run.run();
  ASSERT_NE(plain_run.state(), nullptr);
  EXPECT_EQ(plain_run.state()->owned_bytes(), plain * 16 / 9) << "64 channels at 28x28: Winograd";
  EXPECT_GE(plain_run.workspace_bytes(), uint64_t{2} * 64 * 28 * 28 * sizeof(float))
      << "the blocked input and output";
  expect_close(plain_run.out(0).floats(), want);

  // The same convolution channels-last (NhwcConv, as graph::to_channels_last makes it).
  Tensor xl = x;
  xl.dims = {1, 28, 28, 64};
  const std::vector<float> nhwc = to_channels_last(x.floats(), 64, size_t{28} * 28);
  std::memcpy(xl.bytes.data(), nhwc.data(), nhwc.size() * sizeof(float));
  PreparedRun last("footprint::NhwcConv", {xl, w}, {attr("pads", Ints{1, 1, 1, 1})});
  last.run();
  ASSERT_NE(last.state(), nullptr);
  EXPECT_EQ(last.state()->owned_bytes(), plain * 16 / 9);
  expect_close(last.out(0).floats(), to_channels_last(want, 64, size_t{28} * 28));
}

TEST(ConvKernels, DepthwiseRunsInItsPlannedWorkspaceOneBlockPerThread) {
  const std::vector<std::optional<Tensor>> inputs{random_floats({2, 24, 10, 10}, 5),
                                                  random_floats({24, 1, 3, 3}, 6)};
  const std::vector<Wire> attrs{attr("group", int64_t{24}), attr("pads", Ints{1, 1, 1, 1})};
  // The workspace hook sizes for the session's intra-op threads, as oneDNN's scratchpads are.
  runtime::set_intra_op_threads(1);
  PreparedRun one("Conv", inputs, attrs);
  one.run();
  // One channel's plane at a time, zero-padded: 12 rows of 18 floats (a whole vector of 16
  // output columns plus the window's 2 more), rounded up to 64 bytes.
  const uint64_t block = (uint64_t{12} * 18 * sizeof(float) + 63) / 64 * 64;
  EXPECT_EQ(one.workspace_bytes(), block);
  EXPECT_EQ(one.allocations(), 0u);

  runtime::set_intra_op_threads(2);
  PreparedRun two("Conv", inputs, attrs);
  two.threads(2).run();
  runtime::set_intra_op_threads(1);
  EXPECT_EQ(two.workspace_bytes(), 2 * block);
  EXPECT_EQ(two.out(0).floats(), one.out(0).floats()) << "each thread packs into its own plane";
}

TEST(ConvKernels, UnsupportedCasesFailClearly) {
  PreparedRun d("Conv",
                {Tensor::of<double>(DType::float64, {1, 1, 3, 3}, std::vector<double>(9, 1.0)),
                 Tensor::of<double>(DType::float64, {1, 1, 1, 1}, {1.0})});
  EXPECT_NE(d.run_error().find("dtype double is not supported"), std::string::npos);
  PreparedRun r("Conv",
                {random_floats({1, 1, 2, 2, 2, 2}, 1), random_floats({1, 1, 1, 1, 1, 1}, 2)});
  EXPECT_NE(r.run_error().find("rank 6 are not supported"), std::string::npos);
}

// ---- ConvTranspose

struct DeconvCase {
  Ints x{}, w{};
  int64_t group = 1;
  Ints strides{}, dilations{}, pads{}, output_padding{}, output_shape{};
  bool bias = true;
};

void check_deconv(const DeconvCase& c, unsigned seed) {
  SCOPED_TRACE("deconv seed " + std::to_string(seed));
  const size_t nd = c.x.size() - 2;
  const Tensor x = random_floats(c.x, seed);
  const Tensor w = random_floats(c.w, seed + 1);
  std::optional<Tensor> b;
  if (c.bias) b = random_floats({c.w[1] * c.group}, seed + 2);
  std::vector<Wire> attrs{attr("group", c.group)};
  if (!c.strides.empty()) attrs.push_back(attr("strides", c.strides));
  if (!c.dilations.empty()) attrs.push_back(attr("dilations", c.dilations));
  if (!c.pads.empty()) attrs.push_back(attr("pads", c.pads));
  if (!c.output_padding.empty()) attrs.push_back(attr("output_padding", c.output_padding));
  if (!c.output_shape.empty()) attrs.push_back(attr("output_shape", c.output_shape));
  std::vector<std::optional<Tensor>> inputs{x, w};
  if (b) inputs.push_back(b);
  PreparedRun k("ConvTranspose", inputs, attrs);
  k.run();
  WindowSpec s{c.strides.empty() ? Ints(nd, 1) : c.strides,
               c.dilations.empty() ? Ints(nd, 1) : c.dilations, Ints(nd, 0)};
  const Ints& ydims = k.out(0).dims;
  for (size_t i = 0; i < nd; ++i) {
    if (!c.pads.empty()) s.pad_begin[i] = c.pads[i];
    if (!c.output_shape.empty()) {
      // ONNX: total padding from the requested extent, the larger half at the begin.
      const int64_t op = c.output_padding.empty() ? 0 : c.output_padding[i];
      const int64_t total = s.strides[i] * (c.x[i + 2] - 1) + op +
                            (c.w[i + 2] - 1) * s.dilations[i] + 1 - ydims[i + 2];
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      s.pad_begin[i] = total - half;
    }
  }
  expect_close(k.out(0).floats(), ref_deconv(x, w, b, ydims, c.group, s));
}

TEST(ConvTransposeKernels, MatchesTheReferenceAcrossAttributes) {
  const std::vector<DeconvCase> cases{
      {.x = {1, 3, 4, 4}, .w = {3, 2, 3, 3}},
      // groups, strides, output_padding
      {.x = {2, 4, 5, 4},
       .w = {4, 3, 3, 2},
       .group = 2,
       .strides = {2, 3},
       .pads = {1, 0, 1, 2},
       .output_padding = {1, 2}},
      {.x = {1, 2, 4, 5},
       .w = {2, 3, 2, 3},
       .strides = {2, 2},
       .dilations = {2, 1},
       .pads = {0, 1, 1, 0}},
      // output_shape beyond what the input reaches (negative total padding)
      {.x = {1, 2, 3, 3}, .w = {2, 2, 3, 3}, .strides = {3, 2}, .output_shape = {10, 8}},
      {.x = {1, 3, 7}, .w = {3, 4, 3}, .strides = {2}, .pads = {1, 1}, .bias = false},
      {.x = {1, 2, 3, 3, 2}, .w = {2, 2, 2, 2, 2}, .strides = {2, 1, 2}},
  };
  unsigned seed = 100;
  for (const DeconvCase& c : cases) check_deconv(c, seed += 10);
}

// ---- Pools

struct PoolCase {
  std::string op{};
  Ints x{}, kernel{}, strides{}, pads{};
  bool ceil = false;
  bool include_pad = false;
  Ints dilations{};
};

std::vector<float> ref_pool(const PoolCase& c, const Tensor& xt, const Ints& ydims) {
  const auto x = xt.floats();
  const size_t nd = c.kernel.size();
  const Ints xs = tail(c.x, 2), ys = tail(ydims, 2);
  const Ints strides = c.strides.empty() ? Ints(nd, 1) : c.strides;
  const Ints dil = c.dilations.empty() ? Ints(nd, 1) : c.dilations;
  const Ints pads = c.pads.empty() ? Ints(2 * nd, 0) : c.pads;
  std::vector<float> y;
  for (int64_t plane = 0; plane < c.x[0] * c.x[1]; ++plane) {
    for (int64_t oi = 0; oi < product(ys); ++oi) {
      const Ints o = coords(oi, ys);
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t count = 0;
      for (int64_t ki = 0; ki < product(c.kernel); ++ki) {
        const Ints k = coords(ki, c.kernel);
        int64_t at = 0;
        bool inside = true, padded = true;
        for (size_t d = 0; d < nd; ++d) {
          const int64_t p = o[d] * strides[d] - pads[d] + k[d] * dil[d];
          inside = inside && p >= 0 && p < xs[d];
          padded = padded && p < xs[d] + pads[d + nd];
          at = at * xs[d] + p;
        }
        if (c.include_pad ? padded : inside) ++count;
        if (!inside) continue;
        const double v = x[static_cast<size_t>(plane * product(xs) + at)];
        best = std::max(best, v);
        sum += v;
      }
      y.push_back(static_cast<float>(c.op == "MaxPool" ? best : sum / static_cast<double>(count)));
    }
  }
  return y;
}

std::vector<Wire> pool_attrs(const PoolCase& c) {
  std::vector<Wire> attrs{attr("kernel_shape", c.kernel)};
  if (!c.strides.empty()) attrs.push_back(attr("strides", c.strides));
  if (!c.pads.empty()) attrs.push_back(attr("pads", c.pads));
  if (!c.dilations.empty()) attrs.push_back(attr("dilations", c.dilations));
  if (c.ceil) attrs.push_back(attr("ceil_mode", int64_t{1}));
  if (c.include_pad) attrs.push_back(attr("count_include_pad", int64_t{1}));
  return attrs;
}

// 2-D max pooling: long rows with partial windows at the end (SqueezeNet's ceil_mode pool),
// stride 1 with pads, strides and pads unequal per axis, dilations unequal per axis, a row
// narrower than the window, a window wider than the row.
std::vector<PoolCase> max_pool_2d_cases() {
  return {
      {.op = "MaxPool", .x = {1, 3, 111, 111}, .kernel = {3, 3}, .strides = {2, 2}, .ceil = true},
      {.op = "MaxPool", .x = {2, 4, 20, 37}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}},
      {.op = "MaxPool",
       .x = {1, 2, 10, 30},
       .kernel = {5, 2},
       .strides = {2, 3},
       .pads = {2, 0, 1, 1}},
      {.op = "MaxPool",
       .x = {1, 2, 9, 19},
       .kernel = {2, 3},
       .pads = {1, 2, 1, 2},
       .dilations = {2, 3}},
      {.op = "MaxPool", .x = {1, 2, 3, 2}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}},
      {.op = "MaxPool", .x = {1, 1, 6, 5}, .kernel = {1, 7}, .pads = {0, 3, 0, 3}},
  };
}

void check_pool(const PoolCase& c, unsigned seed) {
  SCOPED_TRACE(c.op + " seed " + std::to_string(seed));
  const Tensor x = random_floats(c.x, seed);
  PreparedRun k(c.op, {x}, pool_attrs(c));
  k.run();
  expect_close(k.out(0).floats(), ref_pool(c, x, k.out(0).dims));
}

TEST(PoolKernels, MatchTheReference) {
  const std::vector<PoolCase> cases{
      {.op = "MaxPool", .x = {1, 3, 8, 8}, .kernel = {2, 2}, .strides = {2, 2}},
      {.op = "MaxPool",
       .x = {2, 2, 9, 7},
       .kernel = {3, 3},
       .strides = {2, 2},
       .pads = {1, 1, 1, 1},
       .ceil = true},
      {.op = "MaxPool", .x = {1, 2, 9, 9}, .kernel = {2, 2}, .dilations = {2, 2}},
      {.op = "AveragePool", .x = {1, 3, 8, 8}, .kernel = {3, 3}, .pads = {1, 1, 1, 1}},
      {.op = "AveragePool",
       .x = {1, 3, 8, 8},
       .kernel = {3, 3},
       .strides = {2, 2},
       .pads = {1, 0, 1, 2},
       .include_pad = true},
      // ceil_mode windows past the end pad: the loop (oneDNN would count them as padding)
      {.op = "AveragePool",
       .x = {1, 2, 8, 8},
       .kernel = {3, 3},
       .strides = {2, 2},
       .pads = {1, 1, 1, 1},
       .ceil = true,
       .include_pad = true},
      {.op = "AveragePool",
       .x = {1, 2, 8, 8},
       .kernel = {3, 3},
       .strides = {2, 2},
       .pads = {1, 1, 1, 1},
       .ceil = true},
      {.op = "AveragePool", .x = {1, 2, 6, 5, 4}, .kernel = {2, 2, 2}, .strides = {2, 1, 2}},
      // 4 spatial dims: the loop
      {.op = "MaxPool", .x = {1, 2, 4, 3, 4, 3}, .kernel = {2, 2, 2, 2}, .strides = {1, 1, 2, 1}},
      {.op = "AveragePool", .x = {2, 3, 11}, .kernel = {4}, .strides = {3}, .pads = {1, 2}},
  };
  unsigned seed = 200;
  for (const PoolCase& c : cases) check_pool(c, seed += 10);
  for (const PoolCase& c : max_pool_2d_cases()) check_pool(c, seed += 10);
}

TEST(PoolKernels, MaxPoolIndicesInBothStorageOrders) {
  // One plane of 3x3 after a plane of 9: indices count from the start of the tensor.
  std::vector<float> v(18);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7) % 18);
  const Tensor x = floats({1, 2, 3, 3}, v);
  for (int64_t order : {0, 1}) {
    PreparedRun k("MaxPool", {x}, {attr("kernel_shape", Ints{2, 2}), attr("storage_order", order)},
                  18, 2);
    k.run();
    const auto y = k.out(0).floats();
    const auto idx = k.out(1).values<int64_t>();
    ASSERT_EQ(idx.size(), 8u);
    for (size_t i = 0; i < idx.size(); ++i) {
      const int64_t plane = static_cast<int64_t>(i) / 4;
      int64_t within = idx[i] - plane * 9;
      if (order == 1) within = (within % 3) * 3 + within / 3;  // column-major back to row-major
      EXPECT_EQ(v[static_cast<size_t>(plane * 9 + within)], y[i]) << "order " << order;
    }
  }
}

// A 2-D max without indices runs oneDNN's jit pooling where the CPU has one for the plain layout,
// or else its own loop (tap by tap over a row's inner outputs); with indices, the loop that
// tracks where the max is. They take the taps in the same order, so the values agree bit for bit,
// zeros' signs included. NaNs are left out: which one survives a window is each implementation's
// own (the loops keep one only as a window's first value; oneDNN's AVX-512 kernel drops it), as
// it is onnxruntime's (its loop skips every NaN).
TEST(PoolKernels, MaxPoolWithoutIndicesIsTheIndexedLoopsValueBitForBit) {
  unsigned seed = 900;
  for (const PoolCase& c : max_pool_2d_cases()) {
    Tensor x = random_floats(c.x, seed += 7);
    // Negative values with zeros of both signs among them (so a window's max is often a zero,
    // and which one wins shows in its sign), and ties.
    std::vector<float> v = x.floats();
    for (float& e : v) e = -std::fabs(e);
    for (size_t i = 1; i < v.size(); i += 3) v[i] = (i / 3) % 2 == 0 ? 0.0F : -0.0F;
    for (size_t i = 2; i < v.size(); i += 17) v[i] = -0.5F;
    x = floats(c.x, v);
    PreparedRun plain("MaxPool", {x}, pool_attrs(c));
    PreparedRun indexed("MaxPool", {x}, pool_attrs(c), 18, 2);
    plain.run();
    indexed.run();
    const auto a = plain.out(0).floats();
    const auto b = indexed.out(0).floats();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      uint32_t ab = 0;
      uint32_t bb = 0;
      std::memcpy(&ab, &a[i], sizeof ab);
      std::memcpy(&bb, &b[i], sizeof bb);
      ASSERT_EQ(ab, bb) << "seed " << seed << ", output " << i << ": " << a[i] << " vs " << b[i];
    }
  }
}

// 8-bit MaxPool runs through oneDNN's channels-last jit kernel, reordered there and back in the
// step's workspace (its NCHW one is the reference loop): the same maxima as a loop over the
// window, padding and the ceil_mode edge included, for int8 and uint8.
TEST(PoolKernels, MaxPoolOnBytesRunsChannelsLastInItsWorkspace) {
  const Tensor x = Tensor::of<uint8_t>(DType::uint8, {1, 1, 2, 3}, {1, 9, 3, 4, 2, 200});
  PreparedRun k("MaxPool", {x}, {attr("kernel_shape", Ints{2, 2})});
  k.run();
  EXPECT_EQ(k.out(0).values<uint8_t>(), (std::vector<uint8_t>{9, 200}));
  EXPECT_LE(k.allocations(), 16u) << "oneDNN's execute makes a few small bookkeeping blocks";
  EXPECT_GT(k.workspace_bytes(), 0u);

  // [1, 5, 9, 11], 3x3 stride 2, pads 1 0 1 1, ceil_mode: every output against the loop below.
  const int64_t c = 5, h = 9, w = 11, oh = 5, ow = 6;
  std::vector<uint8_t> bytes(static_cast<size_t>(c * h * w));
  uint32_t r = 17;
  for (uint8_t& b : bytes) {
    r = r * 1664525U + 1013904223U;
    b = static_cast<uint8_t>(r >> 24);
  }
  for (const DType t : {DType::uint8, DType::int8}) {
    const Tensor xs = Tensor::of<uint8_t>(t, {1, c, h, w}, bytes);
    PreparedRun m("MaxPool", {xs},
                  {attr("kernel_shape", Ints{3, 3}), attr("strides", Ints{2, 2}),
                   attr("pads", Ints{1, 0, 1, 1}), attr("ceil_mode", int64_t{1})});
    m.run();
    const std::vector<uint8_t> got = m.out(0).values<uint8_t>();
    ASSERT_EQ(got.size(), static_cast<size_t>(c * oh * ow));
    const auto value = [&](uint8_t b) {
      return t == DType::int8 ? int{static_cast<int8_t>(b)} : int{b};
    };
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x0 = 0; x0 < ow; ++x0) {
          int best = INT_MIN;
          for (int64_t ky = 0; ky < 3; ++ky) {
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = y * 2 - 1 + ky, ix = x0 * 2 + kx;
              if (iy < 0 || iy >= h || ix >= w) continue;
              best = std::max(best, value(bytes[static_cast<size_t>((ch * h + iy) * w + ix)]));
            }
          }
          EXPECT_EQ(value(got[static_cast<size_t>((ch * oh + y) * ow + x0)]), best)
              << dtype_name(t) << " channel " << ch << " at " << y << ", " << x0;
        }
      }
    }
    EXPECT_LE(m.allocations(), 16u);
  }
}

TEST(PoolKernels, GlobalPools) {
  const Tensor x = random_floats({2, 3, 4, 5}, 7);
  const auto v = x.floats();
  PreparedRun avg("GlobalAveragePool", {x});
  avg.run();
  PreparedRun mx("GlobalMaxPool", {x});
  mx.run();
  std::vector<float> want_avg, want_max;
  for (size_t p = 0; p < 6; ++p) {
    double sum = 0;
    float best = v[p * 20];
    for (size_t i = 0; i < 20; ++i) {
      sum += v[p * 20 + i];
      best = std::max(best, v[p * 20 + i]);
    }
    want_avg.push_back(static_cast<float>(sum / 20));
    want_max.push_back(best);
  }
  expect_close(avg.out(0).floats(), want_avg);
  expect_close(mx.out(0).floats(), want_max);
  EXPECT_EQ(avg.allocations(), 0u);
}

// Planes longer than the average's flush block (1024) with a ragged tail, in float and double:
// the partial sums in vector lanes add up to the plain double sum.
TEST(PoolKernels, GlobalAveragePoolOnLongPlanes) {
  const Tensor x = random_floats({1, 2, 41, 29}, 11);
  const auto v = x.floats();
  const size_t plane = size_t{41} * 29;
  std::vector<float> want;
  std::vector<double> as_double(v.begin(), v.end());
  for (size_t p = 0; p < 2; ++p) {
    double sum = 0;
    for (size_t i = 0; i < plane; ++i) sum += v[p * plane + i];
    want.push_back(static_cast<float>(sum / static_cast<double>(plane)));
  }
  PreparedRun avg("GlobalAveragePool", {x});
  avg.run();
  expect_close(avg.out(0).floats(), want, 1e-6f);
  PreparedRun avg64("GlobalAveragePool", {Tensor::of(DType::float64, x.dims, as_double)});
  avg64.run();
  const auto got = avg64.out(0).values<double>();
  ASSERT_EQ(got.size(), 2u);
  for (size_t p = 0; p < 2; ++p) EXPECT_NEAR(got[p], want[p], 1e-6);
}

// ---- LRN: y = x / (bias + alpha / size * sum of squares over the channel window)^beta, the
// window from c - floor((size-1)/2) to c + ceil((size-1)/2).

TEST(LrnKernel, MatchesTheReferenceForOddAndEvenSizes) {
  const Tensor x = random_floats({2, 7, 3, 4}, 9);
  const auto v = x.floats();
  for (int64_t size : {3, 4, 5}) {
    SCOPED_TRACE("size " + std::to_string(size));
    const float alpha = 2e-3f, beta = 0.6f, bias = 1.5f;
    PreparedRun k("LRN", {x},
                  {attr("size", size), attr_float("alpha", alpha), attr_float("beta", beta),
                   attr_float("bias", bias)});
    k.run();
    std::vector<float> want(v.size());
    const int64_t channels = 7, plane = 12;
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        for (int64_t i = 0; i < plane; ++i) {
          double sq = 0;
          const int64_t lo = std::max<int64_t>(0, c - (size - 1) / 2);
          const int64_t hi = std::min<int64_t>(channels - 1, c + size / 2);
          for (int64_t j = lo; j <= hi; ++j) {
            const double e = v[static_cast<size_t>((n * channels + j) * plane + i)];
            sq += e * e;
          }
          const size_t at = static_cast<size_t>((n * channels + c) * plane + i);
          want[at] = static_cast<float>(v[at] / std::pow(bias + alpha / size * sq, beta));
        }
      }
    }
    expect_close(k.out(0).floats(), want);
  }
}

}  // namespace
}  // namespace footprint::testing
