// Control flow: If runs the branch its condition picks, its outputs written straight into the
// node's; Loop runs its body once per iteration with the carried values in the step's scratch.
#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "families.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/graph/node_attributes.hpp"

namespace footprint::runtime::kernels {
namespace {

constexpr size_t kMaxBranchOutputs = 64;

// Runs the branch the condition picks; its outputs are written straight into the node's.
void run_if(graph::KernelContext& ctx) {
  const graph::TensorRef& cond = ctx.input(0);
  if (cond.numel() != 1) ctx.fail("the condition must hold one element");
  const bool take_then = *cond.as<const bool>();
  if (ctx.output_count() > kMaxBranchOutputs) ctx.fail("too many outputs for a branch");
  std::array<graph::TensorRef, kMaxBranchOutputs> outs{};
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    const graph::TensorRef* o = ctx.output_or_null(i);
    if (o == nullptr) ctx.fail("an If output may not be omitted");
    outs[i] = *o;
  }
  ctx.run_subgraph(take_then ? "then_branch" : "else_branch", {},
                   std::span<graph::TensorRef>(outs.data(), ctx.output_count()));
  // The branch's extents: where the branches differ, the node's depend on which one ran.
  for (size_t i = 0; i < ctx.output_count(); ++i) ctx.set_output_extents(i, outs[i].dims);
}

// ---- Loop(M, cond, v_initial...): body(iter_num, cond, v...) -> (cond, v..., scan...)
//
// The step's own scratch (before the body's arena, which the runner places after it) holds the
// iteration number and the two conditions, then the carried values twice: the body reads one set
// and writes the other, which then become its inputs. Each iteration's scan outputs are written
// straight into their row of the node's outputs. Carried values keep their extents: a body that
// changes one is refused (inference then knows no size to plan for it anyway).
constexpr size_t kMaxLoopValues = 64;

uint64_t align64(uint64_t n) {
  return (n + 63) / 64 * 64;
}

constexpr size_t kMaxScanRank = 16;

// Offsets in the step's scratch: the scalars, then each carried value in set A, then set B.
struct LoopLayout {
  std::array<uint64_t, kMaxLoopValues> a{}, b{};  // per carried value
  uint64_t total = 0;
};

// `bytes(k)`: carried value k's bytes, for k < carried.
template <class Bytes>
LoopLayout loop_layout(size_t carried, Bytes&& bytes) {
  LoopLayout l;
  uint64_t at = 64;  // iter_num, cond in, cond out
  for (size_t k = 0; k < carried && k < kMaxLoopValues; ++k) {
    l.a[k] = at;
    at += align64(bytes(k));
  }
  for (size_t k = 0; k < carried && k < kMaxLoopValues; ++k) {
    l.b[k] = at;
    at += align64(bytes(k));
  }
  l.total = at;
  return l;
}

uint64_t loop_workspace(const graph::Node& /*n*/, const std::vector<graph::ConcreteTensor>& in,
                        const std::vector<graph::ConcreteTensor>& /*out*/) {
  const size_t carried = in.size() > 2 ? in.size() - 2 : 0;
  return loop_layout(carried,
                     [&](size_t k) {
                       const graph::ConcreteTensor& t = in[2 + k];
                       uint64_t n = 1;
                       for (const int64_t d : t.dims)
                         n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
                       return dtype_storage_bytes(t.dtype, n).value_or(0);
                     })
      .total;
}

// A scan output's row: its extents past the iteration axis, and its bytes.
struct ScanRow {
  std::array<int64_t, kMaxScanRank> dims{};
  size_t rank = 0;
  uint64_t bytes = 0;
  std::span<const int64_t> extents() const { return {dims.data(), rank}; }
};

void run_loop(graph::KernelContext& ctx) {
  const graph::TensorRef* m_t = ctx.input_or_null(0);
  const graph::TensorRef* c_t = ctx.input_or_null(1);
  if (m_t != nullptr && (m_t->dtype != DType::int64 || m_t->numel() != 1)) {
    ctx.fail("M (input 0) is one int64");
  }
  if (c_t != nullptr && (c_t->dtype != DType::boolean || c_t->numel() != 1)) {
    ctx.fail("cond (input 1) is one bool");
  }
  if (m_t == nullptr && c_t == nullptr) ctx.fail("without M or cond the loop never ends");
  const int64_t max_trips =
      m_t != nullptr ? *m_t->as<const int64_t>() : std::numeric_limits<int64_t>::max();
  bool cond = c_t == nullptr || *c_t->as<const bool>();
  const size_t carried = ctx.input_count() - 2;
  if (ctx.output_count() < carried) ctx.fail("fewer outputs than carried values");
  const size_t scans = ctx.output_count() - carried;
  if (carried + 2 > kMaxLoopValues || 1 + carried + scans > kMaxLoopValues) {
    ctx.fail("too many carried values or scan outputs for a loop");
  }
  const LoopLayout layout =
      loop_layout(carried, [&](size_t k) { return ctx.input(2 + k).bytes(); });
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < layout.total) ctx.fail("the step's scratch is short of its carried values");
  std::byte* base = ws.data();
  auto* iter = reinterpret_cast<int64_t*>(base);
  auto* cond_in = reinterpret_cast<bool*>(base + 8);
  auto* cond_out = reinterpret_cast<bool*>(base + 16);
  const uint64_t* from = layout.a.data();
  const uint64_t* to = layout.b.data();
  for (size_t k = 0; k < carried; ++k) {
    const graph::TensorRef& v = ctx.input(2 + k);
    if (v.bytes() > 0) std::memcpy(base + from[k], v.data, v.bytes());
  }
  std::array<ScanRow, kMaxLoopValues> rows{};
  for (size_t j = 0; j < scans; ++j) {
    const graph::TensorRef& o = ctx.output(carried + j);
    if (o.rank() < 1 || o.rank() > kMaxScanRank) {
      ctx.fail("scan output " + std::to_string(j) + " needs an iteration axis and at most " +
               std::to_string(kMaxScanRank - 1) + " more");
    }
    rows[j].rank = o.rank() - 1;
    uint64_t n = 1;
    for (size_t d = 0; d < rows[j].rank; ++d) {
      rows[j].dims[d] = o.dim(d + 1);
      n *= static_cast<uint64_t>(o.dim(d + 1));
    }
    rows[j].bytes = dtype_storage_bytes(o.dtype, n).value_or(0);
  }
  std::array<graph::TensorRef, kMaxLoopValues> body_in{};
  std::array<graph::TensorRef, kMaxLoopValues> body_out{};
  int64_t trips = 0;
  for (; trips < max_trips && cond; ++trips) {
    *iter = trips;
    *cond_in = cond;
    body_in[0] = graph::TensorRef{DType::int64, {}, iter};
    body_in[1] = graph::TensorRef{DType::boolean, {}, cond_in};
    body_out[0] = graph::TensorRef{DType::boolean, {}, cond_out};
    for (size_t k = 0; k < carried; ++k) {
      const graph::TensorRef& v = ctx.input(2 + k);
      body_in[2 + k] = graph::TensorRef{v.dtype, v.dims, base + from[k]};
      body_out[1 + k] = graph::TensorRef{v.dtype, v.dims, base + to[k]};
    }
    for (size_t j = 0; j < scans; ++j) {
      graph::TensorRef& o = ctx.output(carried + j);
      if (trips >= o.dim(0)) {
        ctx.fail("ran more iterations than the " + std::to_string(o.dim(0)) +
                 " its scan outputs were planned for");
      }
      body_out[1 + carried + j] =
          graph::TensorRef{o.dtype, rows[j].extents(),
                           o.as<std::byte>() + static_cast<uint64_t>(trips) * rows[j].bytes};
    }
    ctx.run_subgraph("body", {body_in.data(), 2 + carried}, {body_out.data(), 1 + carried + scans});
    for (size_t k = 0; k < carried; ++k) {
      const graph::TensorRef& v = ctx.input(2 + k);
      if (!std::equal(body_out[1 + k].dims.begin(), body_out[1 + k].dims.end(), v.dims.begin(),
                      v.dims.end())) {
        ctx.fail("the body changes the extents of carried value " + std::to_string(k) +
                 ", which footprint does not run yet");
      }
    }
    std::swap(from, to);
    if (c_t != nullptr) cond = *cond_out;  // without a cond input the body's is ignored
  }
  for (size_t k = 0; k < carried; ++k) {
    graph::TensorRef* out = ctx.output_or_null(k);
    const uint64_t bytes = ctx.input(2 + k).bytes();
    if (out != nullptr && bytes > 0) std::memcpy(out->data, base + from[k], bytes);
  }
  for (size_t j = 0; j < scans; ++j) {
    std::array<int64_t, kMaxScanRank> extents{};
    extents[0] = trips;
    std::copy_n(rows[j].dims.begin(), rows[j].rank, extents.begin() + 1);
    ctx.set_output_extents(carried + j, {extents.data(), rows[j].rank + 1});
  }
}

// ---- Scan (opset 9+): states and scan inputs; body(states..., one slice of each scan input)
// -> (states..., one slice of each scan output)
//
// The step's own scratch holds the states twice (as Loop's carried values) and one slice buffer
// per scan input and output: each iteration copies its slice of every scan input in (along its
// axis, from the end where its direction is 1), runs the body, and copies each output slice to
// its place; the final states are copied to the outputs.
struct ScanGeometry {
  size_t states = 0, inputs = 0, outputs = 0;
  std::array<int64_t, kMaxLoopValues> in_axis{}, out_axis{};
  std::array<bool, kMaxLoopValues> in_reverse{}, out_reverse{};
};

// `rank_of(input, i)`: the rank of the node's input i (or output i).
ScanGeometry scan_geometry(const graph::Node& n, size_t input_count, size_t output_count,
                           const std::function<size_t(bool, size_t)>& rank_of) {
  ScanGeometry g;
  const int64_t m = graph::attr_int(n, "num_scan_inputs", 0);
  if (m < 0 || static_cast<size_t>(m) > input_count) {
    throw Error("node " + n.name + ": num_scan_inputs " + std::to_string(m) +
                " exceeds its inputs");
  }
  g.inputs = static_cast<size_t>(m);
  g.states = input_count - g.inputs;
  g.outputs = output_count >= g.states ? output_count - g.states : 0;
  if (g.states * 2 + g.inputs + g.outputs > kMaxLoopValues) {
    throw Error("node " + n.name + ": too many states and scan values for a scan");
  }
  const auto axes = [&](const char* name, bool input, size_t count,
                        std::array<int64_t, kMaxLoopValues>& out) {
    const auto given = graph::attr_ints(n, name);
    for (size_t j = 0; j < count; ++j) {
      const size_t rank = rank_of(input, g.states + j);
      int64_t a = given && j < given->size() ? (*given)[j] : 0;
      if (a < 0) a += static_cast<int64_t>(rank);
      if (a < 0 || a >= static_cast<int64_t>(rank)) {
        throw Error("node " + n.name + ": " + name + " " + std::to_string(a) + " is outside rank " +
                    std::to_string(rank));
      }
      out[j] = a;
    }
  };
  const auto directions = [&](const char* name, size_t count,
                              std::array<bool, kMaxLoopValues>& out) {
    const auto given = graph::attr_ints(n, name);
    for (size_t j = 0; j < count; ++j) out[j] = given && j < given->size() && (*given)[j] != 0;
  };
  axes("scan_input_axes", true, g.inputs, g.in_axis);
  axes("scan_output_axes", false, g.outputs, g.out_axis);
  directions("scan_input_directions", g.inputs, g.in_reverse);
  directions("scan_output_directions", g.outputs, g.out_reverse);
  return g;
}

uint64_t bytes_without_axis(DType t, std::span<const int64_t> dims, int64_t axis) {
  uint64_t n = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (static_cast<int64_t>(d) != axis) n *= static_cast<uint64_t>(std::max<int64_t>(dims[d], 0));
  }
  return dtype_storage_bytes(t, n).value_or(0);
}

// Offsets in the step's scratch: states in set A, in set B, then the scan input and output slices.
struct ScanLayout {
  std::array<uint64_t, kMaxLoopValues> a{}, b{}, in{}, out{};
  uint64_t total = 0;
};

template <class StateBytes, class InBytes, class OutBytes>
ScanLayout scan_layout(const ScanGeometry& g, StateBytes&& state, InBytes&& in, OutBytes&& out) {
  ScanLayout l;
  uint64_t at = 0;
  for (size_t k = 0; k < g.states; ++k) l.a[k] = std::exchange(at, at + align64(state(k)));
  for (size_t k = 0; k < g.states; ++k) l.b[k] = std::exchange(at, at + align64(state(k)));
  for (size_t j = 0; j < g.inputs; ++j) l.in[j] = std::exchange(at, at + align64(in(j)));
  for (size_t j = 0; j < g.outputs; ++j) l.out[j] = std::exchange(at, at + align64(out(j)));
  l.total = at;
  return l;
}

uint64_t scan_workspace(const graph::Node& n, const std::vector<graph::ConcreteTensor>& in,
                        const std::vector<graph::ConcreteTensor>& out) {
  try {
    const ScanGeometry g = scan_geometry(n, in.size(), out.size(), [&](bool input, size_t i) {
      const std::vector<graph::ConcreteTensor>& v = input ? in : out;
      return i < v.size() ? v[i].dims.size() : size_t{0};
    });
    const auto state = [&](size_t k) {
      uint64_t c = 1;
      for (const int64_t d : in[k].dims) c *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
      return dtype_storage_bytes(in[k].dtype, c).value_or(0);
    };
    const auto slice_in = [&](size_t j) {
      const graph::ConcreteTensor& t = in[g.states + j];
      return bytes_without_axis(t.dtype, t.dims, g.in_axis[j]);
    };
    const auto slice_out = [&](size_t j) {
      const graph::ConcreteTensor& t = out[g.states + j];
      return bytes_without_axis(t.dtype, t.dims, g.out_axis[j]);
    };
    return scan_layout(g, state, slice_in, slice_out).total;
  } catch (const Error&) {
    return 0;  // the kernel names what is wrong
  }
}

// Slice t of `x` along `axis` to or from `slice` (packed together): outer x (one row) blocks.
void copy_slice(const graph::TensorRef& x, int64_t axis, int64_t t, std::byte* slice, bool into) {
  uint64_t outer = 1;
  uint64_t inner = 1;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (static_cast<int64_t>(d) < axis) outer *= static_cast<uint64_t>(x.dim(d));
    if (static_cast<int64_t>(d) > axis) inner *= static_cast<uint64_t>(x.dim(d));
  }
  const uint64_t row = dtype_storage_bytes(x.dtype, inner).value_or(0);
  const auto extent = static_cast<uint64_t>(x.dim(static_cast<size_t>(axis)));
  auto* base = static_cast<std::byte*>(x.data);
  for (uint64_t o = 0; o < outer; ++o) {
    std::byte* at = base + (o * extent + static_cast<uint64_t>(t)) * row;
    if (into) {
      std::memcpy(at, slice + o * row, row);
    } else {
      std::memcpy(slice + o * row, at, row);
    }
  }
}

void run_scan(graph::KernelContext& ctx) {
  if (ctx.opset() < 9)
    ctx.fail("Scan of opset 8 (a batch axis and sequence_lens) is not supported");
  ScanGeometry g;
  try {
    g = scan_geometry(ctx.node(), ctx.input_count(), ctx.output_count(),
                      [&](bool input, size_t i) -> size_t {
                        if (input) return ctx.input(i).rank();
                        const graph::TensorRef* o = ctx.output_or_null(i);
                        return o != nullptr ? o->rank() : 0;
                      });
  } catch (const Error& e) {
    ctx.fail(e.what());
  }
  if (g.inputs == 0) ctx.fail("a scan needs at least one scan input");
  const int64_t steps = ctx.input(g.states).dim(static_cast<size_t>(g.in_axis[0]));
  for (size_t j = 0; j < g.inputs; ++j) {
    if (ctx.input(g.states + j).dim(static_cast<size_t>(g.in_axis[j])) != steps) {
      ctx.fail("scan input " + std::to_string(j) + " is not " + std::to_string(steps) + " long");
    }
  }
  const ScanLayout layout = scan_layout(
      g, [&](size_t k) { return ctx.input(k).bytes(); },
      [&](size_t j) {
        const graph::TensorRef& t = ctx.input(g.states + j);
        return bytes_without_axis(t.dtype, t.dims, g.in_axis[j]);
      },
      [&](size_t j) {
        const graph::TensorRef& t = ctx.output(g.states + j);
        return bytes_without_axis(t.dtype, t.dims, g.out_axis[j]);
      });
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < layout.total) ctx.fail("the step's scratch is short of its states and slices");
  std::byte* base = ws.data();
  const uint64_t* from = layout.a.data();
  const uint64_t* to = layout.b.data();
  for (size_t k = 0; k < g.states; ++k) {
    if (ctx.input(k).bytes() > 0)
      std::memcpy(base + from[k], ctx.input(k).data, ctx.input(k).bytes());
  }
  // Each scan value's slice extents: its extents without the scan axis.
  std::array<std::array<int64_t, kMaxScanRank>, kMaxLoopValues> slice_dims{};
  const auto slice_of = [&](const graph::TensorRef& t, int64_t axis, size_t slot) {
    if (t.rank() > kMaxScanRank) ctx.fail("a scan value of more than 16 dims");
    size_t r = 0;
    for (size_t d = 0; d < t.rank(); ++d) {
      if (static_cast<int64_t>(d) != axis) slice_dims[slot][r++] = t.dim(d);
    }
    return std::span<const int64_t>(slice_dims[slot].data(), r);
  };
  std::array<graph::TensorRef, kMaxLoopValues> body_in{};
  std::array<graph::TensorRef, kMaxLoopValues> body_out{};
  for (size_t j = 0; j < g.outputs; ++j) {
    if (ctx.output(g.states + j).dim(static_cast<size_t>(g.out_axis[j])) != steps) {
      ctx.fail("scan output " + std::to_string(j) + " is not " + std::to_string(steps) + " long");
    }
  }
  for (int64_t t = 0; t < steps; ++t) {
    for (size_t k = 0; k < g.states; ++k) {
      const graph::TensorRef& v = ctx.input(k);
      body_in[k] = graph::TensorRef{v.dtype, v.dims, base + from[k]};
      body_out[k] = graph::TensorRef{v.dtype, v.dims, base + to[k]};
    }
    for (size_t j = 0; j < g.inputs; ++j) {
      const graph::TensorRef& x = ctx.input(g.states + j);
      const int64_t at = g.in_reverse[j] ? steps - 1 - t : t;
      copy_slice(x, g.in_axis[j], at, base + layout.in[j], false);
      body_in[g.states + j] =
          graph::TensorRef{x.dtype, slice_of(x, g.in_axis[j], j), base + layout.in[j]};
    }
    for (size_t j = 0; j < g.outputs; ++j) {
      const graph::TensorRef& y = ctx.output(g.states + j);
      body_out[g.states + j] =
          graph::TensorRef{y.dtype, slice_of(y, g.out_axis[j], g.inputs + j), base + layout.out[j]};
    }
    ctx.run_subgraph("body", {body_in.data(), g.states + g.inputs},
                     {body_out.data(), g.states + g.outputs});
    for (size_t k = 0; k < g.states; ++k) {
      const graph::TensorRef& v = ctx.input(k);
      if (!std::equal(body_out[k].dims.begin(), body_out[k].dims.end(), v.dims.begin(),
                      v.dims.end())) {
        ctx.fail("the body changes the extents of state " + std::to_string(k) +
                 ", which footprint does not run yet");
      }
    }
    for (size_t j = 0; j < g.outputs; ++j) {
      const int64_t at = g.out_reverse[j] ? steps - 1 - t : t;
      copy_slice(ctx.output(g.states + j), g.out_axis[j], at, base + layout.out[j], true);
    }
    std::swap(from, to);
  }
  for (size_t k = 0; k < g.states; ++k) {
    graph::TensorRef* out = ctx.output_or_null(k);
    if (out != nullptr && ctx.input(k).bytes() > 0) {
      std::memcpy(out->data, base + from[k], ctx.input(k).bytes());
    }
  }
}

}  // namespace

void register_control_flow(graph::OpRegistry& r) {
  r.row("", "If").kernel = run_if;
  r.row("", "If").reports_extents = true;
  r.row("", "If").kernel_dtypes = DTypeSet{DType::boolean};  // the condition
  graph::OpSchema& loop = r.row("", "Loop");
  loop.kernel = run_loop;
  loop.workspace = loop_workspace;
  loop.reports_extents = true;
  // M (input 0, optional); the carried values and scan outputs are copied as bytes, any dtype.
  loop.kernel_dtypes = DTypeSet{DType::int64};
  graph::OpSchema& scan = r.row("", "Scan");
  scan.kernel = run_scan;
  scan.workspace = scan_workspace;
  // States and scan values are copied as bytes: any dtype whose elements are whole bytes.
  scan.kernel_dtypes =
      DTypeSet{DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int8,
               DType::uint8,   DType::int16,   DType::uint16,  DType::int32,    DType::uint32,
               DType::int64,   DType::uint64,  DType::boolean};
}

}  // namespace footprint::runtime::kernels
