#pragma once
// Process-wide heap accounting: every malloc-family call (and so every operator new) is counted
// when the program links the footprint_heap_counter object library. Without it, available()
// is false and the figures stay zero.
//
//   auto before = footprint::heap::snapshot();
//   footprint::heap::reset_peak();
//   work();
//   auto peak = footprint::heap::snapshot().peak_bytes - before.current_bytes;
#include <cstdint>

namespace footprint::heap {

struct Stats {
  uint64_t current_bytes = 0;  // usable bytes of live blocks
  uint64_t peak_bytes = 0;     // high-water mark since start or the last reset_peak()
  uint64_t allocations = 0;    // calls that returned a block
  uint64_t largest_bytes = 0;  // largest single block since the last reset_peak()
};

bool available();
Stats snapshot();
// Restarts the peak (and largest block) from the current figure.
void reset_peak();

}  // namespace footprint::heap
