// The footprint command (src/cli/command_line.cpp has its arguments and exit codes).
#include <malloc.h>

#include "commands.hpp"

namespace {

// glibc serves a large block with its own mapping and unmaps it when freed, but after the first
// such free it raises that threshold to the block's size, so later blocks of weights come from
// the heap, whose freed middle the OS never gets back. Preparing frees weights as it packs or
// folds them: with the threshold raised, ResNet-50's peak RSS was 176 MiB for a 111 MiB heap
// peak; fixed, the pages of every freed block over it go back at once (128 MiB).
constexpr int kMmapThresholdBytes = 256 * 1024;

}  // namespace

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  return footprint::cli::run_command_line(argc, argv);
}
