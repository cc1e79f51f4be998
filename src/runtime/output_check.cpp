#include "footprint/runtime/output_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "footprint/core/error.hpp"
#include "footprint/core/minifloat.hpp"

namespace footprint::runtime {
namespace {

double element_as_double(const Tensor& t, size_t i) {
  const DTypeTraits& traits = dtype_traits(t.dtype());
  if (traits.packed && traits.is_integer()) {
    // int4, uint4: element i is the low nibble of byte i / 2 when i is even, the high one when
    // odd (ONNX's packing).
    const int v = (std::to_integer<int>(t.data()[i / 2]) >> ((i % 2) * 4)) & 0xF;
    return traits.kind == DTypeKind::signed_int ? (v ^ 8) - 8 : v;
  }
  if (t.dtype() == DType::float4e2m1) {
    return decode_float4e2m1((std::to_integer<uint8_t>(t.data()[i / 2]) >> ((i % 2) * 4)) & 0xF);
  }
  if (traits.read_real == nullptr || traits.packed) {
    throw Error("cannot compare " + std::string(traits.name) + " outputs");
  }
  return traits.read_real(t.data() + i * static_cast<size_t>(traits.bits / 8));
}

// The largest finite |element| of a float tensor (0 for others).
double peak_magnitude(const Tensor& t) {
  if (!dtype_traits(t.dtype()).is_float()) return 0;
  double peak = 0;
  for (size_t i = 0; i < t.numel(); ++i) {
    const double v = std::fabs(element_as_double(t, i));
    if (std::isfinite(v)) peak = std::max(peak, v);
  }
  return peak;
}

void compare(const Tensor& got, const Tensor& want, double rtol, double atol, double atol_of_peak,
             OutputCheck& c) {
  const std::string label = "output " + in_quotes(want.name().empty() ? got.name() : want.name());
  if (got.dtype() != want.dtype() || got.dims() != want.dims()) {
    c.match = false;
    if (c.problem.empty()) c.problem = label + ": dtype or extents differ from the expected";
    return;
  }
  const bool exact = !dtype_traits(want.dtype()).is_float();
  if (!exact && atol_of_peak > 0) atol = std::max(atol, atol_of_peak * peak_magnitude(want));
  if (!exact) c.atol_used = std::max(c.atol_used, atol);
  for (size_t i = 0; i < want.numel(); ++i) {
    const double g = element_as_double(got, i);
    const double w = element_as_double(want, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    const double err = std::isinf(w) && g == w ? 0.0 : std::fabs(g - w);
    c.max_abs_error = std::max(c.max_abs_error, std::isnan(err) ? INFINITY : err);
    if (w != 0) c.max_rel_error = std::max(c.max_rel_error, err / std::fabs(w));
    const bool ok = exact ? g == w : err <= atol + rtol * std::fabs(w);
    if (!ok && c.match) {
      c.match = false;
      c.problem = label + " element " + std::to_string(i) + ": got " + std::to_string(g) +
                  ", expected " + std::to_string(w);
    }
  }
}

}  // namespace

OutputCheck check_outputs(std::span<const Tensor> got, std::span<const Tensor> want, double rtol,
                          double atol, double atol_of_peak) {
  OutputCheck c;
  if (got.size() < want.size()) {
    c.match = false;
    c.problem = std::to_string(want.size()) + " outputs expected, " + std::to_string(got.size()) +
                " produced";
    return c;
  }
  bool by_name = true;
  for (const Tensor& w : want) {
    bool found = false;
    for (const Tensor& g : got) found = found || g.name() == w.name();
    by_name = by_name && found && !w.name().empty();
  }
  for (size_t i = 0; i < want.size(); ++i) {
    const Tensor* g = &got[i];
    if (by_name) {
      for (const Tensor& t : got) {
        if (t.name() == want[i].name()) g = &t;
      }
    }
    compare(*g, want[i], rtol, atol, atol_of_peak, c);
  }
  return c;
}

OutputCheck check_outputs(std::span<const Tensor> got,
                          const std::vector<std::filesystem::path>& want_files, double rtol,
                          double atol, double atol_of_peak) {
  std::vector<Tensor> want;
  want.reserve(want_files.size());
  for (const auto& f : want_files) want.push_back(read_tensor_file(f));
  return check_outputs(got, want, rtol, atol, atol_of_peak);
}

}  // namespace footprint::runtime
