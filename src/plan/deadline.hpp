#pragma once
// A wall-clock budget the planners check now and then.
#include <chrono>
#include <optional>

namespace footprint::plan::detail {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Deadline(double seconds)
      : end_(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(seconds < 0 ? 0 : seconds))) {}
  // No limit when unset: a heuristic asked for no budget runs to the end.
  explicit Deadline(std::optional<double> seconds)
      : end_(seconds ? Deadline(*seconds).end_ : Clock::time_point::max()) {}
  bool passed() const { return Clock::now() >= end_; }
  double seconds_left() const { return std::chrono::duration<double>(end_ - Clock::now()).count(); }
  // The earlier of this deadline and `seconds` from now: a share of the budget for one part.
  Deadline within(double seconds) const {
    Deadline d(seconds);
    if (end_ < d.end_) d.end_ = end_;
    return d;
  }

 private:
  Clock::time_point end_;
};

}  // namespace footprint::plan::detail
