#include "footprint/plan/buffer.hpp"

#include <string>

#include "footprint/core/error.hpp"

namespace footprint::plan {
namespace {

std::string name_of(const Buffer& b, size_t index) {
  return "buffer " + std::to_string(index) + " (id " + in_quotes(b.id) + ")";
}

}  // namespace

void check_buffers(std::span<const Buffer> buffers) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    auto fail = [&](const std::string& what) { throw Error(name_of(b, i) + ": " + what); };
    if (b.upper <= b.lower) {
      fail("upper (" + std::to_string(b.upper) + ") must be greater than lower (" +
           std::to_string(b.lower) + "): lifetimes are half-open [lower, upper)");
    }
    if (b.size < 0) fail("size " + std::to_string(b.size) + " is negative");
    // Planners add sizes, subtract times and round up to alignments: keep every such sum far
    // from overflow.
    constexpr int64_t kLimit = int64_t{1} << 60;
    if (b.lower < -kLimit || b.upper > kLimit) fail("lifetime outside [-2^60, 2^60]");
    if (b.alignment < 1) fail("alignment " + std::to_string(b.alignment) + " is below 1");
    if (b.size > kLimit || b.alignment > kLimit) fail("size or alignment above 2^60");
    if (b.fixed_offset) {
      const int64_t o = *b.fixed_offset;
      if (o < 0) fail("fixed offset " + std::to_string(o) + " is negative");
      if (o > kLimit) fail("fixed offset above 2^60");
      if (o % b.alignment != 0) {
        fail("fixed offset " + std::to_string(o) + " is not a multiple of its alignment " +
             std::to_string(b.alignment));
      }
    }
  }
}

}  // namespace footprint::plan
