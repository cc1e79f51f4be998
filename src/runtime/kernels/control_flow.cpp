// Control flow: If runs the branch its condition picks, its outputs written straight into the
// node's; Loop runs its body once per iteration with the carried values in the step's scratch.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "families.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/kernel.hpp"

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
}

}  // namespace footprint::runtime::kernels
