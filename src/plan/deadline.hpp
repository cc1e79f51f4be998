#pragma once
// A wall-clock budget the searches check now and then.
#include <chrono>

namespace footprint::plan::detail {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Deadline(double seconds)
      : end_(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(seconds < 0 ? 0 : seconds))) {}
  bool passed() const { return Clock::now() >= end_; }
  double seconds_left() const { return std::chrono::duration<double>(end_ - Clock::now()).count(); }

 private:
  Clock::time_point end_;
};

}  // namespace footprint::plan::detail
