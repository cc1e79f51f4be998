#pragma once
// The bytes of a tensor the runner places, allocates or copies, from its dtype and extents.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/core/error.hpp"

namespace footprint::runtime::runner {

// The analysis sized every tensor with checked arithmetic first, so an overflow here is a bug;
// it still throws rather than hand a kernel a buffer smaller than its extents.
inline size_t bytes_of(DType t, const std::vector<int64_t>& dims) {
  if (t == DType::string) return 0;
  const auto n = checked_numel(dims.data(), dims.size());
  const auto bytes = n ? dtype_storage_bytes(t, *n) : std::nullopt;
  if (!bytes)
    throw SizeOverflow("the bytes of a " + std::string(dtype_name(t)) + " tensor overflow");
  return *bytes;
}

}  // namespace footprint::runtime::runner
