#include "footprint/core/thread_count.hpp"

#include <string>

#include "footprint/core/error.hpp"

namespace footprint {

int checked_thread_count(int64_t threads, std::string_view what) {
  if (threads < 1 || threads > kMaxThreads) {
    throw UsageError(std::string(what) + ": " + std::to_string(threads) +
                     " is not a thread count in 1.." + std::to_string(kMaxThreads));
  }
  return static_cast<int>(threads);
}

}  // namespace footprint
