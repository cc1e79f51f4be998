// Det: the determinant of each trailing [M, M] matrix of X, by LU decomposition with partial
// pivoting in double (a copy of the matrix in the step's workspace, so the run allocates
// nothing): the product of the pivots, its sign flipped once per row exchange. A singular matrix
// gives 0.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "dtype_dispatch.hpp"
#include "families.hpp"

namespace footprint::runtime::kernels {
namespace {

double determinant(double* a, int64_t m) {
  double det = 1;
  for (int64_t c = 0; c < m; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < m; ++r) {
      if (std::abs(a[r * m + c]) > std::abs(a[pivot * m + c])) pivot = r;
    }
    if (a[pivot * m + c] == 0) return 0;
    if (pivot != c) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[pivot * m + k]);
      det = -det;
    }
    const double p = a[c * m + c];
    det *= p;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / p;
      for (int64_t k = c + 1; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
    }
  }
  return det;
}

// M, from the input's extents; 0 where they are not square matrices.
int64_t order_of(std::span<const int64_t> dims) {
  const size_t r = dims.size();
  return r >= 2 && dims[r - 1] == dims[r - 2] ? dims[r - 1] : 0;
}

template <class T>
void det(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  const int64_t m = order_of(x.dims);
  if (m == 0 && x.rank() >= 2 && x.dim(x.rank() - 1) != 0) {
    ctx.fail("X's last two axes must be a square matrix");
  }
  if (x.rank() < 2) ctx.fail("X must have rank 2 or more");
  const std::span<std::byte> ws = ctx.workspace();
  if (ws.size() < static_cast<size_t>(m * m) * sizeof(double)) {
    ctx.fail("the step's workspace is smaller than one matrix in double");
  }
  auto* a = reinterpret_cast<double*>(ws.data());
  const T* in = x.as<const T>();
  T* out = ctx.output(0).as<T>();
  const size_t count = ctx.output(0).numel();
  for (size_t b = 0; b < count; ++b) {
    const T* src = in + b * static_cast<size_t>(m * m);
    for (int64_t i = 0; i < m * m; ++i) a[i] = static_cast<double>(widen(src[i]));
    out[b] = narrow<T>(m == 0 ? 1.0 : determinant(a, m));
  }
}

void run_det(graph::KernelContext& ctx) {
  dispatch_with_16bit<RealTypes>(ctx, ctx.input(0).dtype,
                                 [&](auto tag) { det<decltype(tag)>(ctx); });
}

uint64_t det_workspace(const graph::Node& /*node*/, const std::vector<graph::ConcreteTensor>& in,
                       const std::vector<graph::ConcreteTensor>& /*out*/) {
  if (in.empty()) return 0;
  const int64_t m = order_of(in[0].dims);
  return static_cast<uint64_t>(m * m) * sizeof(double);
}

}  // namespace

void register_det(graph::OpRegistry& r) {
  graph::OpSchema& row = r.row("", "Det");
  row.kernel = run_det;
  row.workspace = det_workspace;
  row.kernel_dtypes = dtypes_with_16bit(RealTypes{});
}

}  // namespace footprint::runtime::kernels
