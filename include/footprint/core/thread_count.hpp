#pragma once
// The one range of intra-op thread counts every entry point accepts (CLI flags, Session, the
// builder's value propagation, fold), so `threads=100000` is refused by name everywhere instead
// of reaching libgomp, which sizes per-thread state from the count and aborts the process when it
// cannot create a thread.
//
//   options.threads = checked_thread_count(requested, "Session: threads");   // UsageError if bad
#include <cstdint>
#include <string_view>

namespace footprint {

// Above the cores of any one machine footprint runs on.
inline constexpr int kMaxThreads = 256;

// `threads` when it is in 1..kMaxThreads; a UsageError "<what>: <n> is not a thread count in
// 1..256" otherwise.
int checked_thread_count(int64_t threads, std::string_view what);

}  // namespace footprint
