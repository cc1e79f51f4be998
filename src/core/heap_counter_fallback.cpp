// Weak stand-ins for programs that do not link the counting malloc (footprint_heap_counter):
// sanitizer builds, and libraries embedded in someone else's process.
#include "footprint/core/heap_counter.hpp"

namespace footprint::heap {

__attribute__((weak)) bool available() {
  return false;
}
__attribute__((weak)) Stats snapshot() {
  return {};
}
__attribute__((weak)) void reset_peak() {}

}  // namespace footprint::heap
