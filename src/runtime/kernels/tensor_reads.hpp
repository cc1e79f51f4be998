#pragma once
// Small reads of a kernel's inputs and attributes into fixed buffers (no heap): index tensors,
// scalars, ints and floats attributes, an axis made non-negative.
//
//   Index axes{};
//   const size_t n = attr_ints_into(ctx, "axes", axes).value_or(0);
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "dtype_dispatch.hpp"
#include "float16.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/kernel.hpp"
#include "index_space.hpp"

namespace footprint::runtime::kernels {

inline void check_rank(const graph::KernelContext& ctx, size_t rank) {
  if (rank > kMaxRank) {
    ctx.fail("rank " + std::to_string(rank) + " is above the limit of " + std::to_string(kMaxRank));
  }
}

// The elements of an integer tensor (int32 or int64) into `out`; returns the count. Fails when
// there are more than out.size().
inline size_t read_ints(const graph::KernelContext& ctx, const graph::TensorRef& t,
                        std::span<int64_t> out) {
  const size_t n = t.numel();
  if (n > out.size())
    ctx.fail("an index tensor has more than " + std::to_string(out.size()) + " entries");
  if (t.dtype == DType::int64) {
    std::copy_n(t.as<const int64_t>(), n, out.begin());
  } else if (t.dtype == DType::int32) {
    std::copy_n(t.as<const int32_t>(), n, out.begin());
  } else {
    ctx.fail("an index tensor must be int32 or int64, is " + dtype_label(t.dtype));
  }
  return n;
}

// The single element of a numeric tensor, as double (or int64 for exactness).
inline double scalar_real(const graph::KernelContext& ctx, const graph::TensorRef& t) {
  if (t.numel() != 1) ctx.fail("a scalar input has " + std::to_string(t.numel()) + " elements");
  double v = 0;
  if (t.dtype == DType::float16) return to_float(*t.as<const Float16>());
  if (t.dtype == DType::bfloat16) return to_float(*t.as<const BFloat16>());
  dispatch_or_fail<NumericTypes>(ctx, t.dtype, [&](auto tag) {
    using T = decltype(tag);
    v = static_cast<double>(*t.as<const T>());
  });
  return v;
}

inline int64_t scalar_int(const graph::KernelContext& ctx, const graph::TensorRef& t) {
  if (t.numel() != 1) ctx.fail("a scalar input has " + std::to_string(t.numel()) + " elements");
  int64_t v = 0;
  dispatch_or_fail<NumericTypes>(ctx, t.dtype, [&](auto tag) {
    using T = decltype(tag);
    // int8 values are signed: sign extension is meant.
    // NOLINTNEXTLINE(bugprone-signed-char-misuse)
    v = static_cast<int64_t>(*t.as<const T>());
  });
  return v;
}

// An ints attribute into `out`; nullopt when absent. Fails when it has more than out.size().
inline std::optional<size_t> attr_ints_into(const graph::KernelContext& ctx, std::string_view name,
                                            std::span<int64_t> out) {
  const auto* a = ctx.attribute(name);
  if (a == nullptr) return std::nullopt;
  if (a->ints.count > out.size()) ctx.fail("attribute '" + std::string(name) + "' is too long");
  size_t n = 0;
  a->ints.for_each([&](uint64_t raw) { out[n++] = static_cast<int64_t>(raw); });
  return n;
}

inline std::optional<size_t> attr_floats_into(const graph::KernelContext& ctx,
                                              std::string_view name, std::span<float> out) {
  const auto* a = ctx.attribute(name);
  if (a == nullptr) return std::nullopt;
  if (a->floats.count > out.size()) ctx.fail("attribute '" + std::string(name) + "' is too long");
  size_t n = 0;
  a->floats.for_each(
      [&](uint64_t raw) { out[n++] = std::bit_cast<float>(static_cast<uint32_t>(raw)); });
  return n;
}

// `axis` in [-rank, rank) made non-negative; fails otherwise.
inline size_t normalize_axis(const graph::KernelContext& ctx, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

}  // namespace footprint::runtime::kernels
