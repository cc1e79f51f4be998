#pragma once
// A buffer to place in an arena: its lifetime on some time axis and its size.
//
// This is MiniMalloc's problem statement (id, lower, upper, size), so the planners serve models
// (lifetimes are execution steps) as well as buffer lists from anywhere.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace footprint::plan {

struct Buffer {
  std::string id;
  int64_t lower = 0;      // first time the buffer is live
  int64_t upper = 0;      // first time it is no longer live: the lifetime is [lower, upper)
  int64_t size = 0;       // bytes
  int64_t alignment = 1;  // the offset must be a multiple of this
  std::optional<int64_t> fixed_offset;  // set when the caller has already placed the buffer
};

// Two buffers need disjoint space when both hold bytes at the same time.
inline bool conflict(const Buffer& a, const Buffer& b) {
  return a.size > 0 && b.size > 0 && a.lower < b.upper && b.lower < a.upper;
}

// Throws footprint::Error naming the first buffer that no plan could honour: an empty or reversed
// lifetime, a negative size, an alignment below 1, a fixed offset that is negative or misaligned,
// or an offset + size that would overflow.
void check_buffers(std::span<const Buffer> buffers);

}  // namespace footprint::plan
