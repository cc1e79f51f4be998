// The counting malloc as a library to preload into a process that footprint does not build
// (`LD_PRELOAD=build/release/lib/libfootprint_heap.so python3 ...`): these C entry points let
// the process read the figures through its dynamic symbols (Python's ctypes.CDLL(None)), with
// nothing linked against footprint. footprint.torch.measure() reads them when they are there.
#include "footprint/core/heap_counter.hpp"

extern "C" {

// The counter's figures now, in heap::Stats' field order.
__attribute__((visibility("default"))) void footprint_heap_stats(footprint::heap::Stats* out) {
  if (out != nullptr) *out = footprint::heap::snapshot();
}

// Restarts the peak from the current figure.
__attribute__((visibility("default"))) void footprint_heap_reset_peak() {
  footprint::heap::reset_peak();
}

}  // extern "C"
