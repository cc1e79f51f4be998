// The window generators of graph/ops/signal.cpp (opset 17): HannWindow, HammingWindow and
// BlackmanWindow write `size` samples of their cosine sums, periodic (the denominator N, the
// default: a window for spectral analysis, as torch's periodic=True) or symmetric (N - 1),
// computed in double and stored in output_datatype.
//
//   Hann      w[n] = sin^2(pi n / D)
//   Hamming   w[n] = 25/46 - (21/46) cos(2 pi n / D)
//   Blackman  w[n] = 0.42 - 0.5 cos(2 pi n / D) + 0.08 cos(4 pi n / D)
#include <cmath>
#include <cstdint>
#include <numbers>

#include "dtype_dispatch.hpp"
#include "families.hpp"

namespace footprint::runtime::kernels {
namespace {

enum class Window { hann, hamming, blackman };

double sample(Window w, double n, double d) {
  const double angle = 2 * std::numbers::pi * n / d;
  switch (w) {
    case Window::hann: {
      const double s = std::sin(std::numbers::pi * n / d);
      return s * s;
    }
    case Window::hamming:
      return 25.0 / 46.0 - (21.0 / 46.0) * std::cos(angle);
    case Window::blackman:
      return 0.42 - 0.5 * std::cos(angle) + 0.08 * std::cos(2 * angle);
  }
  return 0;
}

template <Window kWindow>
void run_window(graph::KernelContext& ctx) {
  graph::TensorRef& y = ctx.output(0);
  const auto size = static_cast<int64_t>(y.numel());
  const bool periodic = ctx.attr_int("periodic", 1) != 0;
  // A symmetric window of one sample is that sample (its denominator would be 0).
  const auto d = static_cast<double>(periodic || size == 1 ? size : size - 1);
  dispatch_with_16bit<ArithTypes>(ctx, y.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* out = y.as<T>();
    for (int64_t n = 0; n < size; ++n) {
      out[n] = narrow<T>(size == 1 ? 1.0 : sample(kWindow, static_cast<double>(n), d));
    }
  });
}

}  // namespace

void register_signal(graph::OpRegistry& r) {
  const DTypeSet outputs = dtypes_with_16bit(ArithTypes{});
  const auto set = [&](const char* op, graph::KernelFn kernel) {
    graph::OpSchema& row = r.row("", op);
    row.kernel = kernel;
    row.kernel_dtypes = outputs;
    row.kernel_dtype_of = -1;  // output 0: the window's dtype is output_datatype
  };
  set("HannWindow", run_window<Window::hann>);
  set("HammingWindow", run_window<Window::hamming>);
  set("BlackmanWindow", run_window<Window::blackman>);
}

}  // namespace footprint::runtime::kernels
