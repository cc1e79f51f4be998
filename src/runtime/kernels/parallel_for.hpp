#pragma once
// Parallel loops over an index range (OpenMP), one chunk without a thread team when the work is
// small.
//
//   parallel_for(ctx.threads(), rows, [&](size_t begin, size_t end) { ... });
#include <omp.h>

#include <algorithm>
#include <cstddef>

namespace footprint::runtime::kernels {

// Runs body(begin, end) over [0, n) in up to `threads` contiguous chunks; one chunk (no thread
// team) when the work is small.
template <class F>
void parallel_for(int threads, size_t n, F&& body, size_t min_chunk = 4096) {
  min_chunk = std::max<size_t>(min_chunk, 1);
  const size_t chunks = threads <= 1 || n < 2 * min_chunk
                            ? 1
                            : std::min<size_t>(static_cast<size_t>(threads), n / min_chunk);
  if (chunks <= 1) {
    body(size_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static)
  for (size_t c = 0; c < chunks; ++c) body(n * c / chunks, n * (c + 1) / chunks);
}

}  // namespace footprint::runtime::kernels
