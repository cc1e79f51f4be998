#include "footprint/runtime/random_inputs.hpp"

#include <random>

#include "footprint/core/error.hpp"

namespace footprint::runtime {
namespace {

template <class T, class Gen>
void fill(const Tensor& t, Gen& gen) {
  T* p = reinterpret_cast<T*>(t.data());
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (size_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(u(gen));
  } else if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < t.numel(); ++i) p[i] = false;
  } else {
    std::uniform_int_distribution<int> u(0, 3);
    for (size_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(u(gen));
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
    switch (in.dtype) {
      case DType::float32:
        fill<float>(t, gen);
        break;
      case DType::float64:
        fill<double>(t, gen);
        break;
      case DType::int8:
        fill<int8_t>(t, gen);
        break;
      case DType::uint8:
        fill<uint8_t>(t, gen);
        break;
      case DType::int16:
        fill<int16_t>(t, gen);
        break;
      case DType::uint16:
        fill<uint16_t>(t, gen);
        break;
      case DType::int32:
        fill<int32_t>(t, gen);
        break;
      case DType::uint32:
        fill<uint32_t>(t, gen);
        break;
      case DType::int64:
        fill<int64_t>(t, gen);
        break;
      case DType::uint64:
        fill<uint64_t>(t, gen);
        break;
      case DType::boolean:
        fill<bool>(t, gen);
        break;
      default:
        throw Error("input " + in_quotes(in.name) + ": cannot make up " +
                    std::string(dtype_name(in.dtype)) + " values");
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace footprint::runtime
