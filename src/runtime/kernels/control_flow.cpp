#include <array>

#include "families.hpp"
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

}  // namespace

void register_control_flow(graph::OpRegistry& r) {
  r.row("", "If").kernel = run_if;
  r.row("", "If").reports_extents = true;
  r.row("", "If").kernel_dtypes = DTypeSet{DType::boolean};  // the condition
}

}  // namespace footprint::runtime::kernels
