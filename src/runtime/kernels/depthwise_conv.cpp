#include "depthwise_conv.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "dnnl_util.hpp"
#include "epilogue.hpp"
#include "parallel_for.hpp"
#include "simd_math.hpp"

namespace footprint::runtime::kernels {
namespace {

// Output columns computed together: one AVX-512 vector (two AVX2, four SSE). Rows are computed
// in whole chunks, the last one partly wasted on short rows (a 7-wide row uses 7 of 16 columns),
// which costs less than a branchy remainder.
constexpr int64_t kLanes = 16;
// Wider kernels go to oneDNN; depthwise convolutions are 3x3 to 7x7 in practice.
constexpr int64_t kMaxKernelWidth = 16;

struct Geometry {
  int64_t c = 0, h = 0, w = 0, oh = 0, ow = 0, kh = 0, kw = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  // The packed plane: hp rows, the input at (ph, pw) and zeros around it, so that every window
  // of every output column, up to a whole number of vectors, lies inside it. A row of wl
  // columns is stored as sw phases of pl floats (columns q, q + sw, q + 2 sw, ... in phase q),
  // so the columns one tap reads for consecutive outputs are contiguous whatever the stride.
  int64_t hp = 0, wl = 0, pl = 0, rs = 0, owv = 0;
  std::array<int64_t, kMaxKernelWidth> tap{};  // where tap k's column k * dw is in a packed row
};

Geometry geometry_of(const graph::ops::ConvWindow& cw, std::span<const int64_t> x,
                     std::span<const int64_t> wt, std::span<const int64_t> y) {
  Geometry g;
  g.c = x[1];
  g.h = x[2];
  g.w = x[3];
  g.oh = y[2];
  g.ow = y[3];
  g.kh = wt[2];
  g.kw = wt[3];
  g.sh = cw.strides[0];
  g.sw = cw.strides[1];
  g.dh = cw.dilations[0];
  g.dw = cw.dilations[1];
  g.ph = cw.forward_pads(0, g.kh, g.h, g.oh).begin;
  g.pw = cw.forward_pads(1, g.kw, g.w, g.ow).begin;
  g.hp = std::max(g.ph + g.h, (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1);
  g.owv = (g.ow + kLanes - 1) / kLanes * kLanes;
  g.wl = std::max(g.pw + g.w, (g.owv - 1) * g.sw + (g.kw - 1) * g.dw + 1);
  g.pl = (g.wl + g.sw - 1) / g.sw;
  g.rs = g.pl * g.sw;
  for (int64_t k = 0; k < g.kw; ++k) g.tap[k] = k * g.dw % g.sw * g.pl + k * g.dw / g.sw;
  return g;
}

// One thread's scratch, in floats: the packed plane of one channel.
uint64_t scratch_bytes(const Geometry& g) {
  const auto bytes = static_cast<uint64_t>(g.hp * g.rs) * sizeof(float);
  return (bytes + 63) / 64 * 64;
}

// One channel's plane into the packed plane, zeros around it. Every channel writes the same
// places, so the zeros around them are written once per thread and step (`fresh`), not once per
// channel: that fill was a pass over the plane as long as the copy.
[[gnu::always_inline]] inline void pack(const Geometry& g, const float* x, float* plane,
                                        bool fresh) {
  if (fresh) std::fill(plane, plane + g.hp * g.rs, 0.0F);
  for (int64_t ih = 0; ih < g.h; ++ih) {
    float* row = plane + (g.ph + ih) * g.rs;
    const float* src = x + ih * g.w;
    if (g.sw == 1) {
      std::copy(src, src + g.w, row + g.pw);
    } else if (g.sw == 2) {
      // Even and odd input columns to their phases in one pass of constant stride, which the
      // compiler turns into vector permutes; the general loop below runs element by element and
      // was half of a stride-2 convolution's time.
      float* even = row + g.pw % 2 * g.pl + g.pw / 2;
      float* odd = row + (g.pw + 1) % 2 * g.pl + (g.pw + 1) / 2;
      const int64_t pairs = g.w / 2;
      for (int64_t k = 0; k < pairs; ++k) {
        even[k] = src[2 * k];
        odd[k] = src[2 * k + 1];
      }
      if (g.w % 2 != 0) even[pairs] = src[2 * pairs];
    } else {
      // Phase q holds the input columns iw with (pw + iw) % sw == q, in order.
      for (int64_t q = 0; q < g.sw; ++q) {
        const int64_t first = ((q - g.pw) % g.sw + g.sw) % g.sw;
        if (first >= g.w) continue;
        const int64_t count = (g.w - first + g.sw - 1) / g.sw;
        float* dst = row + q * g.pl + (g.pw + first) / g.sw;
        const float* from = src + first;
        for (int64_t j = 0; j < count; ++j) dst[j] = from[j * g.sw];
      }
    }
  }
}

// Stores the kLanes columns of output row `oh` from column ow0 of the plane `y`, held as
// kLanes / lanes vectors of V. Where a row is a single chunk, the whole chunk is stored even
// past the row's end while it stays inside the plane: rows are stored in order, so later ones
// overwrite the excess; a call to memcpy per partial chunk would cost more than the chunk's
// arithmetic on 7- and 14-wide rows. A longer row's last chunk would spill onto the start of
// the next row, already stored, so it is stored exactly.
template <class V>
[[gnu::always_inline]] inline void store(const Geometry& g, const V* acc, int64_t oh, int64_t ow0,
                                         float* y) {
  constexpr int64_t lanes = sizeof(V) / sizeof(float);
  float* out = y + oh * g.ow + ow0;
  const bool whole = ow0 + kLanes <= g.ow || (g.owv == kLanes && oh * g.ow + kLanes <= g.oh * g.ow);
  if (whole) {
    for (int64_t p = 0; p < kLanes / lanes; ++p) std::memcpy(out + p * lanes, &acc[p], sizeof(V));
  } else {
    for (int64_t l = 0; l < std::min(kLanes, g.ow - ow0); ++l) out[l] = acc[l / lanes][l % lanes];
  }
}

// Output rows [oh, oh + Rows) of one channel, kLanes columns at a time, in vectors of V (the
// ISA's own width: a 16-float chunk is one AVX-512 register, two AVX2 or four SSE ones; GCC
// lowers a vector type wider than the target through the stack, lane by lane, which made the
// AVX2 copy 10x slower than its arithmetic). Each tap is one multiply-add of a contiguous run of
// a packed row per output row. Rows are computed together so that their multiply-adds are
// independent: one accumulator alone waits out each one's latency.
template <class V, int64_t Rows>
[[gnu::always_inline]] inline void rows_of(const Geometry& g, const float* plane, const float* w,
                                           float bias, int64_t oh, float* y) {
  constexpr int64_t lanes = sizeof(V) / sizeof(float);
  constexpr int64_t parts = kLanes / lanes;
  for (int64_t ow0 = 0; ow0 < g.owv; ow0 += kLanes) {
    V acc[Rows][parts];
    for (auto& row : acc) {
      for (V& a : row) a = simd::splat<V>(bias);
    }
    for (int64_t i = 0; i < g.kh; ++i) {
      const float* in = plane + (oh * g.sh + i * g.dh) * g.rs + ow0;
      for (int64_t k = 0; k < g.kw; ++k) {
        const V wk = simd::splat<V>(w[i * g.kw + k]);
        const float* col = in + g.tap[k];
        for (int64_t r = 0; r < Rows; ++r) {
          for (int64_t p = 0; p < parts; ++p) {
            V x;
            std::memcpy(&x, col + r * g.sh * g.rs + p * lanes, sizeof x);
            acc[r][p] += wk * x;
          }
        }
      }
    }
    for (int64_t r = 0; r < Rows; ++r) store<V>(g, acc[r], oh + r, ow0, y);
  }
}

// One channel of one image, start to end, on the widest vectors the CPU has (simd::with_widest:
// the build targets the x86-64 baseline, SSE2); its parts are inlined into each ISA's copy.
void convolve_plane(const Geometry& g, const float* x, const float* w, float bias, float* y,
                    float* plane, bool fresh) {
  simd::with_widest([&](auto tag) {
    using V = decltype(tag);
    pack(g, x, plane, fresh);
    int64_t oh = 0;
    for (; oh + 4 <= g.oh; oh += 4) rows_of<V, 4>(g, plane, w, bias, oh, y);
    for (; oh < g.oh; ++oh) rows_of<V, 1>(g, plane, w, bias, oh, y);
  });
}

// The loop's geometry, computed once when the model is prepared.
class DepthwiseState final : public graph::KernelState {
 public:
  explicit DepthwiseState(const Geometry& g) : geometry(g) {}
  Geometry geometry;
};

bool positive(std::span<const int64_t> dims) {
  return std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d > 0; });
}

}  // namespace

bool is_depthwise_2d(const graph::ops::ConvWindow& cw, std::span<const int64_t> x,
                     std::span<const int64_t> w, DType dtype) {
  if (dtype != DType::float32 || x.size() != 4 || w.size() != 4) return false;
  const int64_t group = cw.group;
  return group > 1 && group == x[1] && w[0] == group && w[1] == 1 && w[3] <= kMaxKernelWidth;
}

uint64_t depthwise_conv_2d_workspace(const graph::ops::ConvWindow& cw, std::span<const int64_t> x,
                                     std::span<const int64_t> w, std::span<const int64_t> y) {
  if (y.size() != 4 || !positive(y)) return 0;
  const auto threads = static_cast<uint64_t>(std::max(1, omp_get_max_threads()));
  return threads * scratch_bytes(geometry_of(cw, x, w, y));
}

std::unique_ptr<graph::KernelState> depthwise_conv_2d_prepare(const graph::ops::ConvWindow& cw,
                                                              std::span<const int64_t> x,
                                                              std::span<const int64_t> w,
                                                              std::span<const int64_t> y) {
  if (y.size() != 4 || !positive(y)) return nullptr;
  return std::make_unique<DepthwiseState>(geometry_of(cw, x, w, y));
}

bool run_depthwise_conv_2d(graph::KernelContext& ctx) {
  const auto* state = dynamic_cast<const DepthwiseState*>(ctx.state());
  if (state == nullptr) return false;
  const graph::TensorRef& x = ctx.input(0);
  const graph::TensorRef& wt = ctx.input(1);
  graph::TensorRef& y = ctx.output(0);
  const Geometry& g = state->geometry;
  if (y.numel() == 0) return true;
  const std::span<std::byte> workspace = ctx.workspace();
  const uint64_t per_thread = scratch_bytes(g);
  const auto slots = static_cast<size_t>(workspace.size() / per_thread);
  if (slots == 0) {
    ctx.fail("the step's workspace (" + std::to_string(workspace.size()) +
             " bytes) is smaller than one thread's packed plane (" + std::to_string(per_thread) +
             " bytes)");
  }
  const auto* xs = x.as<const float>();
  const auto* ws = wt.as<const float>();
  const float* bias = ctx.has_input(2) ? ctx.input(2).as<const float>() : nullptr;
  float* ys = y.as<float>();
  const auto planes = static_cast<size_t>(x.dim(0) * g.c);
  const std::span<const graph::Epilogue> epilogues = ctx.node().epilogues;
  const int threads = std::min(ctx.threads(), static_cast<int>(slots));
  parallel_for(
      threads, planes,
      [&](size_t begin, size_t end) {
        auto* plane = reinterpret_cast<float*>(  // NOLINT(*-reinterpret-cast)
            workspace.data() + static_cast<size_t>(omp_get_thread_num()) * per_thread);
        for (size_t p = begin; p < end; ++p) {
          const int64_t c = static_cast<int64_t>(p) % g.c;
          float* out = ys + static_cast<int64_t>(p) * g.oh * g.ow;
          convolve_plane(g, xs + static_cast<int64_t>(p) * g.h * g.w, ws + c * g.kh * g.kw,
                         bias != nullptr ? bias[c] : 0.0F, out, plane, p == begin);
          // While the plane is in cache (a MobileNet's ReLU6, an EfficientNet's SiLU).
          apply_epilogues(epilogues, out, static_cast<size_t>(g.oh * g.ow));
        }
      },
      1);
  return true;
}

}  // namespace footprint::runtime::kernels
