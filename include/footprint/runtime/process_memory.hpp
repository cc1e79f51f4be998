#pragma once
// What the operating system says this process occupies (Linux /proc).
#include <cstdint>
#include <optional>

namespace footprint::runtime {

struct ProcessMemory {
  uint64_t rss_bytes = 0;       // VmRSS
  uint64_t peak_rss_bytes = 0;  // VmHWM: high-water mark of resident memory
  // From smaps_rollup: resident pages split by what backs them.
  uint64_t private_bytes = 0;      // Private_Clean + Private_Dirty
  uint64_t anonymous_bytes = 0;    // Anonymous (heap, stacks, private writes)
  uint64_t file_backed_bytes = 0;  // Rss - Anonymous (mapped files: the model, libraries)
};

// Reads /proc/self/status and /proc/self/smaps_rollup; nullopt where /proc is unavailable.
std::optional<ProcessMemory> read_process_memory();

}  // namespace footprint::runtime
