// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12-13; rows and inference in
// graph/ops/losses.cpp), as the spec and ONNX's reference define them:
//
// - NLL: element (n, d...) of the loss is -input[n, target[n, d...], d...] times its weight
//   (weight[target], or 1), 0 where the target is ignore_index; reduction "none" keeps them,
//   "sum" adds them, "mean" divides that sum by the sum of the weights (ignored elements weigh
//   nothing).
// - SoftmaxCrossEntropyLoss: the NLL of log_softmax(scores) along the class axis (1), which its
//   optional second output holds.
//
// Sums in double, each value rounded once into T. A target outside [0, C) that is not
// ignore_index fails naming its position.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtype_dispatch.hpp"
#include "families.hpp"

namespace footprint::runtime::kernels {
namespace {

enum class Reduction : uint8_t { none, sum, mean };

struct LossShape {
  int64_t n = 0, classes = 0, inner = 1;  // input [N, C, inner...] as [N, C, inner]
  Reduction reduction = Reduction::mean;
  std::optional<int64_t> ignore;
};

LossShape loss_shape(const graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const graph::TensorRef& target = ctx.input(1);
  if (x.rank() < 2) ctx.fail("the input is [N, C, d...]");
  LossShape s;
  s.n = x.dim(0);
  s.classes = x.dim(1);
  for (size_t d = 2; d < x.rank(); ++d) s.inner *= x.dim(d);
  if (target.rank() + 1 != x.rank() || target.dim(0) != s.n ||
      static_cast<int64_t>(target.numel()) != s.n * s.inner) {
    ctx.fail("the target is [N, d...] for an input [N, C, d...]");
  }
  if (target.dtype != DType::int32 && target.dtype != DType::int64) {
    ctx.fail("the target is int32 or int64");
  }
  const std::string_view reduction = ctx.attr_string("reduction", "mean");
  if (reduction == "none") {
    s.reduction = Reduction::none;
  } else if (reduction == "sum") {
    s.reduction = Reduction::sum;
  } else if (reduction != "mean") {
    ctx.fail("reduction '" + std::string(reduction) + "' is not none, sum or mean");
  }
  if (ctx.attribute("ignore_index") != nullptr) s.ignore = ctx.attr_int("ignore_index", 0);
  const graph::TensorRef* w = ctx.input_or_null(2);
  if (w != nullptr && (w->rank() != 1 || w->dim(0) != s.classes || w->dtype != x.dtype)) {
    ctx.fail("the weight is [C] of the input's dtype");
  }
  return s;
}

int64_t target_at(const graph::TensorRef& t, int64_t i) {
  return t.dtype == DType::int64 ? t.as<const int64_t>()[i] : int64_t{t.as<const int32_t>()[i]};
}

// The loss of input `x` (log-probabilities, [N, C, inner]) into output 0.
template <class T>
void nll(graph::KernelContext& ctx, const LossShape& s, const T* x) {
  const graph::TensorRef& target = ctx.input(1);
  const graph::TensorRef* w = ctx.input_or_null(2);
  const T* weight = w != nullptr ? w->as<const T>() : nullptr;
  T* out = ctx.output(0).as<T>();
  double total = 0;
  double weights = 0;
  for (int64_t i = 0; i < s.n; ++i) {
    for (int64_t d = 0; d < s.inner; ++d) {
      const int64_t at = i * s.inner + d;
      const int64_t c = target_at(target, at);
      double loss = 0;
      double wt = 0;
      if (!s.ignore || c != *s.ignore) {
        if (c < 0 || c >= s.classes) {
          ctx.fail("target[" + std::to_string(at) + "] = " + std::to_string(c) +
                   " is no class of " + std::to_string(s.classes));
        }
        wt = weight != nullptr ? static_cast<double>(widen(weight[c])) : 1.0;
        loss = -static_cast<double>(widen(x[(i * s.classes + c) * s.inner + d])) * wt;
      }
      if (s.reduction == Reduction::none) {
        out[at] = narrow<T>(static_cast<ComputeType<T>>(loss));
      }
      total += loss;
      weights += wt;
    }
  }
  if (s.reduction == Reduction::sum) out[0] = narrow<T>(static_cast<ComputeType<T>>(total));
  if (s.reduction == Reduction::mean) {
    out[0] = narrow<T>(static_cast<ComputeType<T>>(total / weights));
  }
}

template <class T>
void run_nll_typed(graph::KernelContext& ctx) {
  const LossShape s = loss_shape(ctx);
  nll<T>(ctx, s, ctx.input(0).as<const T>());
}

// log_softmax(scores) along the classes into log_prob (output 1, or the workspace), then the NLL
// of it.
template <class T>
void run_sce_typed(graph::KernelContext& ctx) {
  const LossShape s = loss_shape(ctx);
  const T* scores = ctx.input(0).as<const T>();
  graph::TensorRef* out_log_prob = ctx.output_or_null(1);
  T* log_prob = nullptr;
  if (out_log_prob != nullptr) {
    log_prob = out_log_prob->as<T>();
  } else {
    const std::span<std::byte> ws = ctx.workspace();
    if (ws.size() < ctx.input(0).bytes()) ctx.fail("the step's workspace holds no log_prob");
    log_prob = reinterpret_cast<T*>(ws.data());
  }
  for (int64_t i = 0; i < s.n; ++i) {
    for (int64_t d = 0; d < s.inner; ++d) {
      const T* row = scores + i * s.classes * s.inner + d;
      double top = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < s.classes; ++c) {
        top = std::max(top, static_cast<double>(widen(row[c * s.inner])));
      }
      double sum = 0;
      for (int64_t c = 0; c < s.classes; ++c) {
        sum += std::exp(static_cast<double>(widen(row[c * s.inner])) - top);
      }
      const double log_sum = std::log(sum);
      T* dst = log_prob + i * s.classes * s.inner + d;
      for (int64_t c = 0; c < s.classes; ++c) {
        const double v = static_cast<double>(widen(row[c * s.inner])) - top - log_sum;
        dst[c * s.inner] = narrow<T>(static_cast<ComputeType<T>>(v));
      }
    }
  }
  nll<T>(ctx, s, log_prob);
}

// log_prob's bytes where the node does not output it.
uint64_t sce_workspace(const graph::Node& /*node*/, const std::vector<graph::ConcreteTensor>& in,
                       const std::vector<graph::ConcreteTensor>& out) {
  if (out.size() > 1 || in.empty()) return 0;
  uint64_t n = 1;
  for (const int64_t d : in[0].dims) n *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
  return n * static_cast<uint64_t>(dtype_bits(in[0].dtype) / 8);
}

void run_nll(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { run_nll_typed<decltype(tag)>(ctx); });
}

void run_sce(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { run_sce_typed<decltype(tag)>(ctx); });
}

}  // namespace

void register_losses(graph::OpRegistry& r) {
  graph::OpSchema& nll_row = r.row("", "NegativeLogLikelihoodLoss");
  nll_row.kernel = run_nll;
  nll_row.kernel_dtypes = dtypes_with_16bit(RealTypes{});
  graph::OpSchema& sce_row = r.row("", "SoftmaxCrossEntropyLoss");
  sce_row.kernel = run_sce;
  sce_row.workspace = sce_workspace;
  sce_row.kernel_dtypes = dtypes_with_16bit(RealTypes{});
}

}  // namespace footprint::runtime::kernels
