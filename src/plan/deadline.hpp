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
  // The same deadline, for a part that may stop as soon as it sees it cannot end by then: a
  // portfolio would rather have its time back than a plan cut short at the end of it.
  Deadline giving_up_early() const {
    Deadline d = *this;
    d.give_up_early_ = true;
    return d;
  }
  // True when a part that has done `fraction` (0 to 1] of its work `elapsed` seconds after it
  // began would not end by the deadline even at kPaceSlack times its pace so far. The global
  // orders place the dearest buffers first (the largest and the busiest meet the most placed
  // space), so their first pace overstates the whole: measured on training-like traces of 10^5
  // buffers, the pace at 3-80 % of the buffers projected up to 2.1x the time the order took.
  bool hopeless(double elapsed, double fraction) const {
    constexpr double kPaceSlack = 2.5;
    return give_up_early_ && fraction > 0 &&
           elapsed * (1 - fraction) / fraction > kPaceSlack * seconds_left();
  }

 private:
  Clock::time_point end_;
  bool give_up_early_ = false;
};

}  // namespace footprint::plan::detail
