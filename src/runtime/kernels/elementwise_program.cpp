// footprint::Elementwise (graph/elementwise_program.hpp): a run of elementwise ops in one pass.
// The output is walked in tiles small enough that every step's result stays in the first-level
// cache, each step a loop over the tile; the last step writes the output. An input is read once
// per element, where the ops it replaces read and wrote a tensor each.
//
// A tile is part of a row of the broadcast plan (its innermost, merged extent) or, where rows
// are short (a per-channel scale over channels-last pixels: rows of C), several rows, with each
// input that is not contiguous over them gathered into a tile of its own first: a step's loop
// then runs over a tile whatever the rows' length.
//
// Float16 and bfloat16 programs compute in float as well: each tile's inputs widened, each step's
// result rounded into the 16-bit type (the node it replaces stored it so), the last narrowed into
// the output.
#include "footprint/graph/elementwise_program.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "broadcast.hpp"
#include "dtype_dispatch.hpp"
#include "epilogue.hpp"
#include "families.hpp"
#include "float16.hpp"
#include "parallel_for.hpp"
#include "simd_math.hpp"

namespace footprint::runtime::kernels {
namespace {

using graph::ChainOp;
using graph::ChainOperand;
using graph::kMaxChainInputs;
using graph::kMaxChainSteps;

constexpr size_t kTile = 1024;
// Work (elements) below which a part does not go to a thread of its own.
constexpr size_t kSplitRow = 16384;

struct Prepared {
  graph::ChainProgram program;
  size_t inputs = 0;
};

// One operand over a tile: `n` elements at p, or p[0] for all of them. The steps compute on
// float ones; a 16-bit program's inputs are widened a tile at a time (run_tile_16).
template <class T>
struct Source {
  const T* p;
  bool scalar;
};
using Operand = Source<float>;

template <class V>
V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class V>
void store(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// out[i] = f(a[i], b[i]) a vector of V at a time, with a loop for each operand being a vector
// or a scalar; the last, partial vector through zero-padded ones, as simd::map does.
template <class V, class F>
void binary(Operand a, Operand b, float* out, size_t n, const F& f) {
  constexpr size_t lanes = sizeof(V) / sizeof(float);
  const V sa = simd::splat<V>(a.p[0]);
  const V sb = simd::splat<V>(b.p[0]);
  const size_t whole = n - n % lanes;
  if (!a.scalar && !b.scalar) {
    for (size_t i = 0; i < whole; i += lanes) store(out + i, f(load<V>(a.p + i), load<V>(b.p + i)));
  } else if (!a.scalar) {
    for (size_t i = 0; i < whole; i += lanes) store(out + i, f(load<V>(a.p + i), sb));
  } else if (!b.scalar) {
    for (size_t i = 0; i < whole; i += lanes) store(out + i, f(sa, load<V>(b.p + i)));
  } else {
    const V v = f(sa, sb);
    for (size_t i = 0; i < whole; i += lanes) store(out + i, v);
  }
  if (whole == n) return;
  V x = sa;
  V y = sb;
  if (!a.scalar) {
    x = V{};
    std::memcpy(&x, a.p + whole, (n - whole) * sizeof(float));
  }
  if (!b.scalar) {
    y = V{};
    std::memcpy(&y, b.p + whole, (n - whole) * sizeof(float));
  }
  const V v = f(x, y);
  std::memcpy(out + whole, &v, (n - whole) * sizeof(float));
}

// The node's inputs over one tile.
template <class T>
using TileInputs = std::array<Source<T>, kMaxChainInputs>;

using Results = float[kMaxChainSteps - 1][kTile];

// The program's steps over the t elements of a tile, the inputs `j` elements on (scalars
// excepted), the last step into `last`. In a 16-bit program (T Float16 or BFloat16) each step's
// result is rounded into T, as the node it replaces stored it.
template <class V, class T>
void run_steps(const graph::ChainProgram& program, const TileInputs<float>& in, size_t j,
               float* last, size_t t, Results& results) {
  const auto operand = [&](ChainOperand o) {
    if (o.step) return Operand{results[o.index], false};
    const Operand& x = in[o.index];
    return x.scalar ? x : Operand{x.p + j, false};
  };
  for (size_t k = 0; k < program.size; ++k) {
    const graph::ChainStep& s = program.steps[k];
    float* out = k + 1 == program.size ? last : results[k];
    const Operand a = operand(s.operands[0]);
    const Operand b = operand(s.operands[1]);
    switch (s.op) {
      case ChainOp::add:
        binary<V>(a, b, out, t, [](V u, V v) { return u + v; });
        break;
      case ChainOp::sub:
        binary<V>(a, b, out, t, [](V u, V v) { return u - v; });
        break;
      case ChainOp::mul:
        binary<V>(a, b, out, t, [](V u, V v) { return u * v; });
        break;
      case ChainOp::div:
        binary<V>(a, b, out, t, [](V u, V v) { return u / v; });
        break;
      case ChainOp::unary:
        with_epilogue_op(s.unary, [&, alpha = s.alpha, beta = s.beta](auto op) {
          binary<V>(a, a, out, t,
                    [&](V u, V /*same*/) { return apply_epilogue_as<op.value>(u, alpha, beta); });
        });
        break;
    }
    if constexpr (is_16bit_float<T>) {
      if (k + 1 < program.size) round_through<T>(out, t);
    }
  }
}

// The program over n elements (a tile of gathered inputs, or a row of any length whose inputs
// are contiguous or scalars). R is float, or the 16-bit type whose values float32 carriers hold
// (graph/carry_float32.hpp): each step but the last then rounded into it, as a 16-bit program's.
template <class V, class R = float>
void run_tile(const Prepared& prepared, const TileInputs<float>& in, float* y, size_t n) {
  alignas(64) Results results;
  for (size_t j = 0; j < n; j += kTile) {
    run_steps<V, R>(prepared.program, in, j, y + j, std::min(kTile, n - j), results);
  }
}

// The same on 16-bit inputs and output: each tile's inputs widened, the last step's result
// rounded into y.
template <class V, class T>
void run_tile_16(const Prepared& prepared, const TileInputs<T>& in, T* y, size_t n) {
  alignas(64) Results results;
  alignas(64) float wide[kMaxChainInputs][kTile];
  alignas(64) float last[kTile];
  TileInputs<float> tile{};
  for (size_t j = 0; j < n; j += kTile) {
    const size_t t = std::min(kTile, n - j);
    for (size_t i = 0; i < prepared.inputs; ++i) {
      if (in[i].scalar) {
        wide[i][0] = widen(in[i].p[0]);
      } else {
        widen_row(in[i].p + j, wide[i], t);
      }
      tile[i] = {wide[i], in[i].scalar};
    }
    run_steps<V, T>(prepared.program, tile, 0, last, t, results);
    narrow_row(last, y + j, t);
  }
}

// Either of the two for the storage type T (and R, float's rounding type).
template <class V, class T, class R = T>
void run_tile_of(const Prepared& prepared, const TileInputs<T>& in, T* y, size_t n) {
  if constexpr (std::is_same_v<T, float>) {
    run_tile<V, R>(prepared, in, y, n);
  } else {
    run_tile_16<V, T>(prepared, in, y, n);
  }
}

// Calls block(offsets, out_offset, rows) for rows [begin, end) of a plan of rank 2 or more,
// `rows` (at most max_rows) consecutive along its second-innermost dim; offsets[k] is input k's
// element offset at the first row.
template <size_t N, class F>
void for_each_block(const BroadcastPlan<N>& p, size_t begin, size_t end, size_t max_rows,
                    F& block) {
  const size_t len = p.row_length();
  std::array<int64_t, N> off{};
  Index at{};
  size_t rest = begin;
  for (size_t d = p.rank - 1; d-- > 0;) {
    at[d] = static_cast<int64_t>(rest % static_cast<size_t>(p.dims[d]));
    rest /= static_cast<size_t>(p.dims[d]);
    for (size_t k = 0; k < N; ++k) off[k] += at[d] * p.strides[k][d];
  }
  const size_t inner = p.rank - 2;
  for (size_t r = begin; r < end;) {
    const size_t rows =
        std::min({end - r, max_rows, static_cast<size_t>(p.dims[inner] - at[inner])});
    block(off, r * len, rows);
    r += rows;
    at[inner] += static_cast<int64_t>(rows);
    for (size_t k = 0; k < N; ++k) off[k] += static_cast<int64_t>(rows) * p.strides[k][inner];
    for (size_t d = inner; d > 0 && at[d] == p.dims[d]; --d) {  // carry into the outer dims
      for (size_t k = 0; k < N; ++k) off[k] += p.strides[k][d - 1] - at[d] * p.strides[k][d];
      at[d] = 0;
      ++at[d - 1];
    }
  }
}

// Rows [begin, end) of a plan of several rows at the widest vectors the CPU has (one dispatch
// for them all).
template <class T, class R = T>
void run_rows(const Prepared& prepared, const BroadcastPlan<kMaxChainInputs>& plan,
              const std::array<const T*, kMaxChainInputs>& base, T* y, size_t begin, size_t end) {
  const size_t len = plan.row_length();
  const size_t max_rows = len >= kTile ? 1 : kTile / len;
  const size_t outer = plan.rank - 2;
  simd::with_widest([&](auto tag) {
    using V = decltype(tag);
    alignas(64) T gathered[kMaxChainInputs][kTile];
    // What each input's tile was last gathered from: a per-channel input is the same rows for
    // every block of pixels.
    std::array<const T*, kMaxChainInputs> gathered_from{};
    std::array<size_t, kMaxChainInputs> gathered_rows{};
    auto block = [&](const std::array<int64_t, kMaxChainInputs>& off, size_t o, size_t rows) {
      TileInputs<T> in{};
      for (size_t i = 0; i < prepared.inputs; ++i) {
        const T* p = base[i] + off[i];
        const int64_t along = plan.inner_stride(i);
        const int64_t across = plan.strides[i][outer];
        if (rows == 1 || (along == 1 && across == static_cast<int64_t>(len))) {
          in[i] = {p, along == 0};
        } else if (along == 0 && across == 0) {
          in[i] = {p, true};
        } else {
          if (gathered_from[i] != p || gathered_rows[i] != rows || across != 0) {
            for (size_t r = 0; r < rows; ++r) {
              const T* src = p + static_cast<int64_t>(r) * across;
              T* dst = gathered[i] + r * len;
              if (along == 0) {
                std::fill_n(dst, len, *src);
              } else {
                std::copy_n(src, len, dst);
              }
            }
            gathered_from[i] = p;
            gathered_rows[i] = rows;
          }
          in[i] = {gathered[i], false};
        }
      }
      run_tile_of<V, T, R>(prepared, in, y + o, rows * len);
    };
    for_each_block<kMaxChainInputs>(plan, begin, end, max_rows, block);
  });
}

template <class T, class R = T>
void run_program_on(graph::KernelContext& ctx, const Prepared& prepared) {
  graph::TensorRef& y = ctx.output(0);
  std::array<std::span<const int64_t>, kMaxChainInputs> dims{};  // absent inputs: scalars
  std::array<const T*, kMaxChainInputs> base{};
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const graph::TensorRef& x = ctx.input(i);
    if (x.dtype != y.dtype) ctx.fail("every input must have the output's dtype");
    dims[i] = x.dims;
    base[i] = x.as<const T>();
  }
  BroadcastPlan<kMaxChainInputs> plan;
  if (!plan_broadcast<kMaxChainInputs>(y.dims, dims, plan)) {
    ctx.fail("the inputs do not broadcast to the output");
  }
  if (y.numel() == 0) return;
  T* out = y.as<T>();
  if (plan.rows() == 1) {
    // One row (inputs of the output's shape, or scalars): broadcast_rows gives each thread a
    // part of it, as it does for any elementwise op.
    broadcast_rows<kMaxChainInputs>(
        plan, ctx.threads(),
        [&](const std::array<int64_t, kMaxChainInputs>& off, size_t o, size_t n) {
          TileInputs<T> in{};
          for (size_t i = 0; i < prepared.inputs; ++i) {
            in[i] = {base[i] + off[i], plan.inner_stride(i) == 0};
          }
          simd::with_widest(
              [&](auto tag) { run_tile_of<decltype(tag), T, R>(prepared, in, out + o, n); });
        });
    return;
  }
  parallel_for(
      ctx.threads(), plan.rows(),
      [&](size_t begin, size_t end) { run_rows<T, R>(prepared, plan, base, out, begin, end); },
      std::max<size_t>(1, kSplitRow / std::max<size_t>(plan.row_length(), 1)));
}

void run_program(graph::KernelContext& ctx) {
  Prepared prepared;
  if (const char* e =
          graph::parse_chain(ctx.attr_string("program", ""), ctx.input_count(), prepared.program)) {
    ctx.fail(std::string("attribute 'program': ") + e);
  }
  prepared.inputs = ctx.input_count();
  if (ctx.output(0).dtype == DType::float32) {
    if (ctx.node().rounds_to == DType::float16)
      return run_program_on<float, Float16>(ctx, prepared);
    if (ctx.node().rounds_to == DType::bfloat16) {
      return run_program_on<float, BFloat16>(ctx, prepared);
    }
  }
  dispatch_with_16bit<Float32Types>(
      ctx, ctx.output(0).dtype, [&](auto tag) { run_program_on<decltype(tag)>(ctx, prepared); });
}

}  // namespace

void register_elementwise_program(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("footprint", "Elementwise");
  row.kernel = run_program;
  // Each tile's inputs are read before the last step writes its output there.
  row.in_place = true;
  // Float16 and bfloat16 widened a tile at a time, each step rounded as its node stored it.
  row.kernel_dtypes = dtypes_with_16bit(Float32Types{});
  // On float32 carriers, each step but the last rounded into Node::rounds_to (the last by the
  // runtime): the bits of the 16-bit program.
  row.float32_carriers = graph::Float32Carriers::whole;
}

}  // namespace footprint::runtime::kernels
