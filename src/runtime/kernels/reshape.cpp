// Kernels of the ops that rearrange elements without reading their values (graph/ops/reshape.cpp
// sizes them): Transpose, Expand, Tile, DepthToSpace/SpaceToDepth, and Trilu, which zeroes a
// triangle. The views of that family (Reshape, Flatten, ...) need no kernel of their own: the
// registry's view declaration gives them the copy (runtime/op_kernels.cpp).
//
// Each is dispatched on the element size only (Bits<n>), so one instantiation serves every dtype
// of that width; strided reads all go through gather_strided (strided_copy.hpp), which merges
// dims and copies contiguous runs with memcpy.
#include <algorithm>
#include <cstring>
#include <memory>
#include <span>

#include "dnnl_util.hpp"
#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "float16.hpp"
#include "footprint/graph/node_attributes.hpp"
#include "index_space.hpp"
#include "parallel_for.hpp"
#include "strided_copy.hpp"
#include "tensor_reads.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::KernelContext;
using graph::TensorRef;

// ---- Transpose

// The last two axes swapped, the others kept (attention's keys to Kt): each [rows, cols] matrix
// transposed in tiles of kTile x kTile, so both sides stay in cache where the strided walk reads
// a cache line per element (a GPT-2-width decode step's four [16, 1025, 64] keys: 6.4 ms of its
// 31, `footprint run --profile`, before this path).
constexpr int64_t kTile = 32;

template <class T>
void transpose_last_two(const T* x, T* y, int64_t matrices, int64_t rows, int64_t cols,
                        int threads) {
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  parallel_for(
      threads, static_cast<size_t>(matrices * row_tiles),
      [&](size_t begin, size_t end) {
        for (auto t = static_cast<int64_t>(begin); t < static_cast<int64_t>(end); ++t) {
          const int64_t m = t / row_tiles;
          const int64_t r0 = t % row_tiles * kTile;
          const int64_t r1 = std::min(rows, r0 + kTile);
          const T* a = x + m * rows * cols;
          T* b = y + m * rows * cols;
          for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
            const int64_t c1 = std::min(cols, c0 + kTile);
            for (int64_t c = c0; c < c1; ++c) {
              for (int64_t r = r0; r < r1; ++r) b[c * rows + r] = a[r * cols + c];
            }
          }
        }
      },
      std::max<size_t>(1, static_cast<size_t>(16384 / std::max<int64_t>(cols * kTile, 1))));
}

void transpose_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  const size_t rank = x.rank();
  check_rank(ctx, rank);
  Index perm{};
  const size_t n = attr_ints_into(ctx, "perm", perm).value_or(0);
  if (n == 0) {
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  } else if (n != rank) {
    ctx.fail("perm has " + std::to_string(n) + " entries for rank " + std::to_string(rank));
  }
  Index in_strides{};
  strides_into(x.dims, in_strides);
  CopyIndex strides{};
  for (size_t i = 0; i < rank; ++i) strides[i] = in_strides[normalize_axis(ctx, perm[i], rank)];
  bool last_two = rank >= 2;
  for (size_t i = 0; i < rank && last_two; ++i) {
    const size_t want = i + 2 < rank ? i : i + 2 == rank ? rank - 1 : rank - 2;
    last_two = normalize_axis(ctx, perm[i], rank) == want;
  }
  const int64_t rows = rank >= 2 ? x.dims[rank - 2] : 0;
  const int64_t cols = rank >= 2 ? x.dims[rank - 1] : 0;
  if (last_two && rows >= kTile && cols >= kTile) {
    const auto matrices = static_cast<int64_t>(x.numel()) / (rows * cols);
    return dispatch_bits(ctx, x.dtype, [&](auto tag) {
      using T = decltype(tag);
      transpose_last_two<T>(x.as<const T>(), y.as<T>(), matrices, rows, cols, ctx.threads());
    });
  }
  gather_strided(ctx, x, y, rank, copy_dims(y.dims), strides);
}

// ---- Expand and Tile

void expand_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  check_rank(ctx, y.rank());
  if (x.rank() > y.rank()) ctx.fail("the input has a higher rank than the output");
  Index xs{};
  strides_into(x.dims, xs);
  CopyIndex strides{};
  const size_t offset = y.rank() - x.rank();
  for (size_t d = 0; d < x.rank(); ++d) strides[offset + d] = x.dims[d] == 1 ? 0 : xs[d];
  gather_strided(ctx, x, y, y.rank(), copy_dims(y.dims), strides);
}

// Output dim d is [repeats, extent]: a walk of rank 2 x rank whose repeat dims read stride 0.
void tile_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  const size_t rank = x.rank();
  check_rank(ctx, rank);
  if (y.numel() == 0) return;
  Index xs{};
  strides_into(x.dims, xs);
  CopyIndex dims{};
  CopyIndex strides{};
  for (size_t d = 0; d < rank; ++d) {
    dims[2 * d] = y.dims[d] / x.dims[d];
    dims[2 * d + 1] = x.dims[d];
    strides[2 * d] = 0;
    strides[2 * d + 1] = xs[d];
  }
  gather_strided(ctx, x, y, 2 * rank, dims, strides);
}

// ---- DepthToSpace and SpaceToDepth: transposes of rank-6 views

template <bool kToSpace>
void depth_space_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  if (x.rank() != 4) ctx.fail("the input must have rank 4");
  const int64_t b = ctx.attr_int("blocksize", 0);
  if (b <= 0) ctx.fail("blocksize must be positive");
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], w = x.dims[3];
  std::array<int64_t, 6> view{};
  std::array<size_t, 6> perm{};
  if (!kToSpace) {
    view = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
  } else if (ctx.attr_string("mode", "DCR") == "CRD") {
    view = {n, c / (b * b), b, b, h, w};
    perm = {0, 1, 4, 2, 5, 3};
  } else {
    view = {n, b, b, c / (b * b), h, w};
    perm = {0, 3, 4, 1, 5, 2};
  }
  std::array<int64_t, 6> vs{};
  strides_into(view, vs);
  CopyIndex dims{};
  CopyIndex strides{};
  for (size_t i = 0; i < 6; ++i) {
    dims[i] = view[perm[i]];
    strides[i] = vs[perm[i]];
  }
  gather_strided(ctx, x, y, 6, dims, strides);
}

// ---- Trilu

void trilu_kernel(KernelContext& ctx) {
  const TensorRef& x = ctx.input(0);
  TensorRef& y = ctx.output(0);
  if (x.rank() < 2) ctx.fail("the input must have rank 2 or more");
  const int64_t k = ctx.has_input(1) ? scalar_int(ctx, ctx.input(1)) : 0;
  const bool upper = ctx.attr_int("upper", 1) != 0;
  const auto rows = x.dims[x.rank() - 2];
  const auto cols = x.dims[x.rank() - 1];
  const size_t mats = product(x.dims, 0, x.rank() - 2);
  dispatch_bits(ctx, x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.as<const T>();
    T* out = y.as<T>();
    for (size_t m = 0; m < mats; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t at = (static_cast<int64_t>(m) * rows + i) * cols;
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = upper ? j - i >= k : j - i <= k;
          out[at + j] = keep ? in[at + j] : T(0);  // zero bits are zero in every dtype
        }
      }
    }
  });
}

// ---- ToChannelsLast, FromChannelsLast (graph::to_channels_last): [N, C, H, W] <-> [N, H, W, C],
// as oneDNN reorders between the two layouts of the same NCHW extents.

// The types a layout change moves: float32, the 16-bit floats of float16 models (their
// convolutions run channels-last on float32 copies, through_float32.hpp), and the bytes of
// quantized models between NhwcQLinearConv and friends.
constexpr DTypeSet kLayoutTypes{DType::float32, DType::float16, DType::bfloat16, DType::int8,
                                DType::uint8};

// A tensor of NCHW extents, plain or channels-last, as oneDNN reorders it: float32 as itself;
// a 16-bit float as pairs of bytes (an innermost extent of 2), which oneDNN 2.6's jit reorders
// move at the speed of a copy where its float16 reorders convert every element on the way.
dnnl::memory::desc layout_desc(const std::vector<int64_t>& nchw, DType t, bool channels_last) {
  if (t == DType::float32) {
    return channels_last ? channels_last_desc(nchw) : plain_desc(nchw);
  }
  if (t == DType::int8 || t == DType::uint8) {  // bytes moved as bytes, whatever they mean
    return {nchw, dnnl::memory::data_type::u8,
            channels_last ? dnnl::memory::format_tag::nhwc : dnnl::memory::format_tag::nchw};
  }
  const int64_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
  const dnnl::memory::dims dims{n, c, h, w, 2};
  const dnnl::memory::dims strides =
      channels_last ? dnnl::memory::dims{h * w * c * 2, 2, w * c * 2, c * 2, 1}
                    : dnnl::memory::dims{c * h * w * 2, h * w * 2, w * 2, 2, 1};
  return {dims, dnnl::memory::data_type::u8, strides};
}

template <bool kToChannelsLast>
dnnl::reorder::primitive_desc layout_change_pd(const graph::Node& n, const Extents& e) {
  if (e.in[0].size() != 4 || !kLayoutTypes.contains(e.in_dtype[0])) {
    node_fail(n, "changes the layout of " + kLayoutTypes.to_string() + " tensors of rank 4 only");
  }
  const std::vector<int64_t>& nchw = kToChannelsLast ? e.in[0] : e.out[0];
  const dnnl::memory::desc plain = layout_desc(nchw, e.in_dtype[0], false);
  const dnnl::memory::desc last = layout_desc(nchw, e.in_dtype[0], true);
  const dnnl::memory::desc& from = kToChannelsLast ? plain : last;
  const dnnl::memory::desc& to = kToChannelsLast ? last : plain;
  return {cpu_engine(), from, cpu_engine(), to, user_scratchpad()};
}

// A oneDNN reorder prepared once (`Build` gives its descriptor from the node and its extents),
// its scratch in the step's workspace: the layout changes and the channel shuffle.
template <auto Build>
std::unique_ptr<graph::KernelState> reorder_prepare(const graph::KernelContext& ctx) {
  const Extents e = extents_of(ctx);
  if (!all_positive(e)) return nullptr;
  const dnnl::reorder::primitive_desc pd = Build(ctx.node(), e);
  return std::make_unique<DnnlState>(
      pd, dnnl::reorder(pd),
      std::vector<std::pair<int, dnnl::memory::desc>>{{DNNL_ARG_FROM, pd.src_desc()},
                                                      {DNNL_ARG_TO, pd.dst_desc()}});
}

template <auto Build>
uint64_t reorder_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                           const std::vector<graph::ConcreteTensor>& out) {
  return scratchpad_of(Build, n, in, out);
}

void reorder_kernel(graph::KernelContext& ctx) {
  DnnlState* st = prepared_state(ctx);
  if (st == nullptr) return;
  st->bind(DNNL_ARG_FROM, ctx.input(0).data);
  st->bind(DNNL_ARG_TO, ctx.output(0).data);
  st->execute(ctx);
}

// The 16-bit floats change layout by a transpose of 2-byte elements of their own, a block of
// pixels of one image at a time (every channel of it): oneDNN 2.6's reorder of byte pairs
// (layout_desc) took 0.075 ms for the 3-channel input of a 224x224 image, where float32's
// reorder takes 0.046 (`footprint run --profile`, the float16 variants of the quantized zoo).
template <bool kToChannelsLast>
void transpose_16bit(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  graph::TensorRef& y = ctx.output(0);
  const std::span<const int64_t> nchw = kToChannelsLast ? x.dims : y.dims;
  if (nchw.size() != 4) ctx.fail("changes the layout of tensors of rank 4 only");
  const int64_t c = nchw[1];
  const int64_t pixels = nchw[2] * nchw[3];
  constexpr int64_t kPixels = 256;
  constexpr int64_t kFewChannels = 8;
  const int64_t blocks = (pixels + kPixels - 1) / kPixels;
  const auto* in = x.as<const uint16_t>();
  auto* out = y.as<uint16_t>();
  parallel_for(
      ctx.threads(), static_cast<size_t>(nchw[0] * blocks),
      [&](size_t begin, size_t end) {
        for (size_t b = begin; b < end; ++b) {
          const int64_t image = static_cast<int64_t>(b) / blocks;
          const int64_t p0 = static_cast<int64_t>(b) % blocks * kPixels;
          const int64_t p1 = std::min(pixels, p0 + kPixels);
          const uint16_t* src = in + image * c * pixels;
          uint16_t* dst = out + image * c * pixels;
          const auto move = [&](int64_t p, int64_t ch) {
            if constexpr (kToChannelsLast) {
              dst[p * c + ch] = src[ch * pixels + p];
            } else {
              dst[ch * pixels + p] = src[p * c + ch];
            }
          };
          // Pixel by pixel, its channels inner, so the channels-last side is read or written in
          // order (with a few channels: the input image), or channel by channel.
          if (c <= kFewChannels) {
            for (int64_t p = p0; p < p1; ++p) {
              for (int64_t ch = 0; ch < c; ++ch) move(p, ch);
            }
          } else {
            for (int64_t ch = 0; ch < c; ++ch) {
              for (int64_t p = p0; p < p1; ++p) move(p, ch);
            }
          }
        }
      },
      8);
}

template <bool kToChannelsLast>
void layout_change_kernel(graph::KernelContext& ctx) {
  if (is_16bit(ctx.input(0).dtype)) return transpose_16bit<kToChannelsLast>(ctx);
  reorder_kernel(ctx);
}

template <bool kToChannelsLast>
std::unique_ptr<graph::KernelState> layout_change_prepare(const graph::KernelContext& ctx) {
  if (is_16bit(ctx.input(0).dtype)) return nullptr;  // the transpose needs no state
  return reorder_prepare<layout_change_pd<kToChannelsLast>>(ctx);
}

template <bool kToChannelsLast>
uint64_t layout_change_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                                 const std::vector<graph::ConcreteTensor>& out) {
  if (!in.empty() && is_16bit(in[0].dtype)) return 0;
  return reorder_workspace<layout_change_pd<kToChannelsLast>>(n, in, out);
}

// ---- footprint::ChannelShuffle / NhwcChannelShuffle (graph::fuse): channel i * group + j of the
// output is channel j * (C / group) + i of the input: per image and pixel, a [group, C / group]
// matrix transposed, which a oneDNN reorder between two strided views of the same extents does
// at the speed of a copy.

template <bool kChannelsLast>
dnnl::reorder::primitive_desc shuffle_pd(const graph::Node& n, const Extents& e) {
  if (e.in[0].size() != 4 || e.in_dtype[0] != DType::float32) {
    node_fail(n, "shuffles the channels of float32 tensors of rank 4 only");
  }
  const std::vector<int64_t>& d = e.in[0];
  const int64_t channels = kChannelsLast ? d[3] : d[1];
  const int64_t groups = graph::attr_int(n, "group", 0);
  if (groups < 1 || channels % groups != 0) {
    node_fail(n, "group " + std::to_string(groups) + " does not divide " +
                     std::to_string(channels) + " channels");
  }
  const int64_t per_group = channels / groups;
  using dims = dnnl::memory::dims;
  const auto f32 = dnnl::memory::data_type::f32;
  if constexpr (kChannelsLast) {
    // [pixels, C / group, group]: read with the group axis outermost in each pixel.
    const dims shape{d[0] * d[1] * d[2], per_group, groups};
    const dnnl::memory::desc from(shape, f32, dims{channels, 1, per_group});
    const dnnl::memory::desc to(shape, f32, dims{channels, groups, 1});
    return {cpu_engine(), from, cpu_engine(), to, user_scratchpad()};
  } else {
    const int64_t plane = d[2] * d[3];
    const dims shape{d[0], per_group, groups, plane};
    const dnnl::memory::desc from(shape, f32, dims{channels * plane, plane, per_group * plane, 1});
    const dnnl::memory::desc to(shape, f32, dims{channels * plane, groups * plane, plane, 1});
    return {cpu_engine(), from, cpu_engine(), to, user_scratchpad()};
  }
}

}  // namespace

void register_reshape(graph::OpRegistry& r) {
  graph::OpSchema& transpose = r.row("", "Transpose");
  transpose.kernel = transpose_kernel;
  // NHWC to NCHW: kept channels-last, the output is its input's bytes (a view).
  transpose.channels_last = "NhwcTranspose";
  transpose.channels_last_runs = [](const graph::Node& n) {
    return graph::attr_ints(n, "perm") == std::vector<int64_t>{0, 3, 1, 2};
  };
  transpose.channels_last_inputs = 0;  // reads its input as it is
  transpose.channels_last_alone = true;
  r.row("", "Expand").kernel = expand_kernel;
  r.row("", "Tile").kernel = tile_kernel;
  r.row("", "DepthToSpace").kernel = depth_space_kernel<true>;
  r.row("", "SpaceToDepth").kernel = depth_space_kernel<false>;
  r.row("", "Trilu").kernel = trilu_kernel;
  graph::OpSchema& shuffle = r.row("footprint", "ChannelShuffle");
  shuffle.kernel = reorder_kernel;
  shuffle.prepare = reorder_prepare<shuffle_pd<false>>;
  shuffle.workspace = reorder_workspace<shuffle_pd<false>>;
  shuffle.channels_last = "NhwcChannelShuffle";
  graph::OpSchema& nhwc_shuffle = r.row("footprint", "NhwcChannelShuffle");
  nhwc_shuffle.kernel = reorder_kernel;
  nhwc_shuffle.prepare = reorder_prepare<shuffle_pd<true>>;
  nhwc_shuffle.workspace = reorder_workspace<shuffle_pd<true>>;
  shuffle.rows_at_bound = nhwc_shuffle.rows_at_bound = true;  // each image alone
  graph::OpSchema& to = r.row("footprint", "ToChannelsLast");
  to.kernel = layout_change_kernel<true>;
  to.prepare = layout_change_prepare<true>;
  to.workspace = layout_change_workspace<true>;
  graph::OpSchema& from = r.row("footprint", "FromChannelsLast");
  from.kernel = layout_change_kernel<false>;
  from.prepare = layout_change_prepare<false>;
  from.workspace = layout_change_workspace<false>;
  // Each image is reordered alone.
  to.rows_at_bound = from.rows_at_bound = true;
  // The permutations move elements without reading them (dispatch_bits); the reorders are
  // oneDNN's, built for float32.
  for (const char* op : {"Transpose", "Expand", "Tile", "DepthToSpace", "SpaceToDepth", "Trilu"})
    r.row("", op).kernel_dtypes = movable_dtypes();
  for (graph::OpSchema* row : {&shuffle, &nhwc_shuffle})
    row->kernel_dtypes = DTypeSet{DType::float32};
  for (graph::OpSchema* row : {&to, &from}) {
    row->kernel_dtypes = kLayoutTypes;
    row->float32_carriers = graph::Float32Carriers::whole;  // moves values, computes none
  }
}

}  // namespace footprint::runtime::kernels
