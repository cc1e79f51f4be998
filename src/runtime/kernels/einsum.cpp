// Einsum (row and inference in graph/ops/matmul.cpp; the equation resolved by
// graph/ops/einsum_equation.hpp for both): each output element the sum, over the letters the
// output lacks, of the product of the operands' elements at those letters. An operand reads
// letter l through the sum of its axes' strides named l (a diagonal where a letter repeats), 0
// where the axis has extent 1 and the letter more (broadcast). Floats sum in double, integers in
// int64 (wrapping as the output type does), each output element rounded once into T.
//
// Plain loops: correct for any equation, not yet fast where a product dominates (a batched
// matrix product written as Einsum runs a multiply-add per element and letter). The plan (each
// letter's extent, each operand's strides) is made when preparing; a run allocates nothing.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dtype_dispatch.hpp"
#include "families.hpp"
#include "footprint/graph/ops/einsum_equation.hpp"
#include "parallel_for.hpp"

namespace footprint::runtime::kernels {
namespace {

// The letters an equation may have (52, and 16 axes of an ellipsis), and the operands.
constexpr size_t kMaxLetters = 52 + 16;
constexpr size_t kMaxOperands = 8;

struct Plan {
  std::vector<int64_t> extent;                // per letter
  std::vector<std::vector<int64_t>> strides;  // per operand, per letter (elements)
  std::vector<size_t> summed;                 // the letters the output lacks
  std::vector<size_t> output;                 // the output's letters, outermost first
};

Plan plan_of(const graph::KernelContext& ctx) {
  if (ctx.input_count() > kMaxOperands) {
    ctx.fail(std::to_string(ctx.input_count()) + " operands; the kernel runs at most " +
             std::to_string(kMaxOperands));
  }
  std::vector<size_t> ranks;
  for (size_t i = 0; i < ctx.input_count(); ++i) ranks.push_back(ctx.input(i).rank());
  const graph::ops::EinsumEquation e = graph::ops::EinsumEquation::resolve(
      ctx.attr_string("equation", ""), ranks, [&](const std::string& what) { ctx.fail(what); });
  if (e.letters > kMaxLetters) ctx.fail("the equation has more letters than a kernel runs");
  Plan p;
  p.extent.assign(e.letters, 1);
  for (size_t i = 0; i < e.operands.size(); ++i) {
    const graph::TensorRef& t = ctx.input(i);
    for (size_t axis = 0; axis < e.operands[i].size(); ++axis) {
      int64_t& x = p.extent[e.operands[i][axis]];
      const int64_t d = t.dim(axis);
      if (d != 1 && x != 1 && d != x) {
        ctx.fail("input " + std::to_string(i) + "'s axis " + std::to_string(axis) + " (" +
                 std::to_string(d) + ") does not match its letter's other axes (" +
                 std::to_string(x) + ")");
      }
      if (d != 1) x = d;
    }
  }
  for (size_t i = 0; i < e.operands.size(); ++i) {
    const graph::TensorRef& t = ctx.input(i);
    std::vector<int64_t>& s = p.strides.emplace_back(e.letters, 0);
    int64_t step = 1;
    for (size_t axis = e.operands[i].size(); axis-- > 0;) {
      if (t.dim(axis) != 1) s[e.operands[i][axis]] += step;
      step *= t.dim(axis);
    }
  }
  p.output = e.output;
  for (size_t l = 0; l < e.letters; ++l) {
    if (std::find(e.output.begin(), e.output.end(), l) == e.output.end()) p.summed.push_back(l);
  }
  return p;
}

// The plan made when preparing, for the extents it was made at.
class EinsumState final : public graph::KernelState {
 public:
  EinsumState(Plan p, std::vector<std::vector<int64_t>> d)
      : plan(std::move(p)), dims(std::move(d)) {}
  Plan plan;
  std::vector<std::vector<int64_t>> dims;  // per input
};

bool same_dims(const graph::KernelContext& ctx, const EinsumState& st) {
  if (st.dims.size() != ctx.input_count()) return false;
  for (size_t i = 0; i < st.dims.size(); ++i) {
    const graph::TensorRef& t = ctx.input(i);
    if (!std::equal(st.dims[i].begin(), st.dims[i].end(), t.dims.begin(), t.dims.end())) {
      return false;
    }
  }
  return true;
}

std::unique_ptr<graph::KernelState> einsum_prepare(const graph::KernelContext& ctx) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const graph::TensorRef& t = ctx.input(i);
    if (std::any_of(t.dims.begin(), t.dims.end(), [](int64_t d) { return d < 0; })) {
      return nullptr;  // extents known only when running
    }
    dims.emplace_back(t.dims.begin(), t.dims.end());
  }
  return std::make_unique<EinsumState>(plan_of(ctx), std::move(dims));
}

template <class T>
using Sum = std::conditional_t<std::is_floating_point_v<ComputeType<T>>, double, int64_t>;

template <class T>
void einsum(graph::KernelContext& ctx, const Plan& p) {
  const size_t operands = ctx.input_count();
  std::vector<const T*> in;
  for (size_t i = 0; i < operands; ++i) {
    if (ctx.input(i).dtype != ctx.input(0).dtype) ctx.fail("the inputs differ in dtype");
    in.push_back(ctx.input(i).as<const T>());
  }
  T* y = ctx.output(0).as<T>();
  const auto count = static_cast<size_t>(ctx.output(0).numel());
  int64_t inner = 1;
  for (const size_t l : p.summed) inner *= p.extent[l];
  parallel_for(
      ctx.threads(), count,
      [&](size_t begin, size_t end) {
        std::array<int64_t, kMaxOperands> at{};  // each operand's offset of the output element
        std::array<int64_t, kMaxLetters> index{};
        for (size_t o = begin; o < end; ++o) {
          // The output element's letters (row-major over the output's axes).
          auto rest = static_cast<int64_t>(o);
          for (size_t k = p.output.size(); k-- > 0;) {
            const int64_t x = p.extent[p.output[k]];
            index[p.output[k]] = rest % x;
            rest /= x;
          }
          for (size_t i = 0; i < operands; ++i) {
            at[i] = 0;
            for (const size_t l : p.output) at[i] += index[l] * p.strides[i][l];
          }
          Sum<T> total = 0;
          for (const size_t l : p.summed) index[l] = 0;
          for (int64_t n = 0; n < inner; ++n) {
            Sum<T> product = 1;
            for (size_t i = 0; i < operands; ++i) {
              int64_t off = at[i];
              for (const size_t l : p.summed) off += index[l] * p.strides[i][l];
              product *= static_cast<Sum<T>>(widen(in[i][off]));
            }
            total += product;
            for (size_t k = p.summed.size(); k-- > 0;) {  // the next summed element
              const size_t l = p.summed[k];
              if (++index[l] < p.extent[l]) break;
              index[l] = 0;
            }
          }
          if constexpr (std::is_floating_point_v<ComputeType<T>>) {
            y[o] = narrow<T>(static_cast<ComputeType<T>>(total));
          } else {
            y[o] = static_cast<T>(total);
          }
        }
      },
      std::max<size_t>(1, static_cast<size_t>(4096 / std::max<int64_t>(1, inner))));
}

void run_einsum(graph::KernelContext& ctx) {
  // Unprepared (a lone kernel run) or at other extents, the plan is made here.
  const auto* st = dynamic_cast<const EinsumState*>(ctx.state());
  const std::optional<Plan> own =
      st != nullptr && same_dims(ctx, *st) ? std::nullopt : std::optional(plan_of(ctx));
  const Plan& p = own ? *own : st->plan;
  dispatch_with_16bit<ArithTypes>(ctx, ctx.input(0).dtype,
                                  [&](auto tag) { einsum<decltype(tag)>(ctx, p); });
}

}  // namespace

void register_einsum(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("", "Einsum");
  row.kernel = run_einsum;
  row.prepare = einsum_prepare;
  row.kernel_dtypes = dtypes_with_16bit(ArithTypes{});
}

}  // namespace footprint::runtime::kernels
