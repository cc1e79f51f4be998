#include "footprint/runtime/random_inputs.hpp"

#include <cstring>
#include <random>

#include "footprint/core/error.hpp"

namespace footprint::runtime {
namespace {

// Floats uniform in [-1, 1), integers in 0..3 (valid indices and counts for small extents),
// bools false.
template <class Gen>
void fill(const Tensor& t, const DTypeTraits& traits, Gen& gen) {
  auto* p = t.data();
  const auto width = static_cast<size_t>(traits.bits / 8);
  if (traits.kind == DTypeKind::boolean) {
    std::memset(p, 0, t.numel());
  } else if (traits.is_float()) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (size_t i = 0; i < t.numel(); ++i) traits.write_real(u(gen), p + i * width);
  } else {
    std::uniform_int_distribution<int> u(0, 3);
    for (size_t i = 0; i < t.numel(); ++i) traits.write_real(u(gen), p + i * width);
  }
}

}  // namespace

std::vector<Tensor> random_inputs(const std::vector<Session::InputInfo>& inputs,
                                  const DimBindings& dims, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<Tensor> out;
  for (const Session::InputInfo& in : inputs) {
    if (!in.shape.ranked) throw Error("input " + in_quotes(in.name) + " has no rank to make up");
    std::vector<int64_t> extents;
    for (const Dim& d : in.shape.dims) extents.push_back(d.evaluate(dims).value_or(1));
    Tensor t(in.name, in.dtype, std::move(extents));
    const DTypeTraits& traits = dtype_traits(in.dtype);
    if (traits.write_real == nullptr || traits.packed) {
      throw Error("input " + in_quotes(in.name) + ": cannot make up " + std::string(traits.name) +
                  " values");
    }
    fill(t, traits, gen);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace footprint::runtime
