#pragma once
// Seeded inputs for a model the caller has no data for: uniform(-1, 1) for floating point,
// small non-negative integers otherwise, false for bool. The same seed gives the same tensors.
#include <cstdint>
#include <vector>

#include "footprint/core/shape.hpp"
#include "footprint/runtime/session.hpp"
#include "footprint/runtime/tensor.hpp"

namespace footprint::runtime {

// Named dims take their value from `dims`, or 1. Throws footprint::Error for inputs whose rank
// or dtype cannot be made up (unranked, strings).
std::vector<Tensor> random_inputs(const std::vector<Session::InputInfo>& inputs,
                                  const DimBindings& dims, uint64_t seed);

}  // namespace footprint::runtime
