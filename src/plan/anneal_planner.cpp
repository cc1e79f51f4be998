// `anneal`: simulated annealing over the placement order.
//
// A plan is decoded from an order of the buffers: each goes to the lowest offset clear of those
// before it that it meets in time (first fit). Every plan whose buffers cannot move down is the
// decoding of its own offset order, so some order decodes to an optimal plan, and decoding a
// plan's offset order never raises a buffer: the search starts from `start` and can only improve
// on it. A move swaps two buffers or moves one; only the order from the first changed position
// on is decoded again. The energy is the arena height plus a small share of the mean top of the
// buffers, so moves that lower buffers without lowering the arena yet still count.
//
// Deterministic for a given seed and iteration count; under a time limit alone, the number of
// moves (so the result) depends on the machine's speed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "algorithms.hpp"
#include "placement.hpp"

namespace footprint::plan::detail {
namespace {

class Annealer {
 public:
  Annealer(std::span<const Buffer> buffers, const Plan& start) : buffers_(buffers) {
    std::vector<Buffer> searched;
    for (uint32_t i = 0; i < buffers.size(); ++i) {
      const Buffer& b = buffers[i];
      if (b.fixed_offset) {
        fixed_top_ = std::max(fixed_top_, *b.fixed_offset + b.size);
        if (b.size > 0) fixed_.push_back(i);
        continue;
      }
      if (b.size == 0) continue;
      items_.push_back(i);
      searched.push_back(b);
    }
    meets_ = conflict_lists(searched);
    obstacles_.resize(items_.size());
    for (size_t k = 0; k < items_.size(); ++k) {
      for (const uint32_t f : fixed_) {
        const Buffer& fb = buffers[f];
        if (conflict(buffers[items_[k]], fb))
          obstacles_[k].push_back({*fb.fixed_offset, *fb.fixed_offset + fb.size});
      }
    }
    std::vector<int64_t> start_offsets(items_.size());
    for (size_t k = 0; k < items_.size(); ++k) start_offsets[k] = start.offsets[items_[k]];
    order_ = order_by_offset(start_offsets);
    position_.resize(items_.size());
    offset_.resize(items_.size());
  }

  // The first decoding, which the constructor leaves to this: false when the deadline passed
  // before it was done (on a big instance it costs as much as a greedy pass).
  bool start(const Deadline& deadline) { return decode(0, &deadline); }

  size_t size() const { return items_.size(); }
  double energy() const { return energy_; }
  int64_t height() const { return height_; }

  // Positions i and j (i != j) of the order exchanged, or the item at i moved to j.
  void apply(size_t i, size_t j, bool swap) {
    if (swap) {
      std::swap(order_[i], order_[j]);
    } else if (i < j) {
      std::rotate(order_.begin() + static_cast<std::ptrdiff_t>(i),
                  order_.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                  order_.begin() + static_cast<std::ptrdiff_t>(j) + 1);
    } else {
      std::rotate(order_.begin() + static_cast<std::ptrdiff_t>(j),
                  order_.begin() + static_cast<std::ptrdiff_t>(i),
                  order_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
    decode(std::min(i, j));
  }

  // What apply() needs to be undone: the order and offsets from `from` on.
  struct Snapshot {
    size_t from = 0;
    std::vector<uint32_t> order;
    std::vector<int64_t> offsets;  // by item, of the items in `order`
    double energy = 0;
    int64_t height = 0;
  };
  void save(size_t from, Snapshot& s) const {
    s.from = from;
    s.order.assign(order_.begin() + static_cast<std::ptrdiff_t>(from), order_.end());
    s.offsets.clear();
    for (const uint32_t k : s.order) s.offsets.push_back(offset_[k]);
    s.energy = energy_;
    s.height = height_;
  }
  void restore(const Snapshot& s) {
    for (size_t n = 0; n < s.order.size(); ++n) {
      order_[s.from + n] = s.order[n];
      position_[s.order[n]] = static_cast<uint32_t>(s.from + n);
      offset_[s.order[n]] = s.offsets[n];
    }
    energy_ = s.energy;
    height_ = s.height;
  }

  std::vector<int64_t> offsets() const {
    std::vector<int64_t> out(buffers_.size(), 0);
    for (size_t i = 0; i < buffers_.size(); ++i) out[i] = buffers_[i].fixed_offset.value_or(0);
    for (size_t k = 0; k < items_.size(); ++k) out[items_[k]] = offset_[k];
    return out;
  }

 private:
  bool decode(size_t from, const Deadline* deadline = nullptr) {
    for (size_t n = from; n < order_.size(); ++n) position_[order_[n]] = static_cast<uint32_t>(n);
    for (size_t n = from; n < order_.size(); ++n) {
      if (deadline && (n & 63) == 0 && deadline->passed()) return false;
      const uint32_t k = order_[n];
      taken_.assign(obstacles_[k].begin(), obstacles_[k].end());
      for (const uint32_t j : meets_[k]) {
        if (position_[j] < n) taken_.push_back({offset_[j], offset_[j] + buffers_[items_[j]].size});
      }
      const Buffer& b = buffers_[items_[k]];
      offset_[k] = choose_offset(taken_, b, Fit::lowest);
    }
    height_ = fixed_top_;
    double tops = 0;
    for (size_t k = 0; k < items_.size(); ++k) {
      const int64_t top = offset_[k] + buffers_[items_[k]].size;
      height_ = std::max(height_, top);
      tops += static_cast<double>(top);
    }
    energy_ = static_cast<double>(height_) +
              (items_.empty() ? 0.0 : 0.05 * tops / static_cast<double>(items_.size()));
    return true;
  }

  std::span<const Buffer> buffers_;
  std::vector<uint32_t> items_;  // buffers searched (not fixed, not empty)
  std::vector<uint32_t> fixed_;
  int64_t fixed_top_ = 0;
  std::vector<std::vector<uint32_t>> meets_;
  std::vector<std::vector<Span>> obstacles_;
  std::vector<uint32_t> order_;
  std::vector<uint32_t> position_;
  std::vector<int64_t> offset_;
  std::vector<Span> taken_;
  double energy_ = 0;
  int64_t height_ = 0;
};

}  // namespace

Plan plan_anneal(std::span<const Buffer> buffers, const Plan& start, const Deadline& deadline,
                 const AnnealLimits& limits) {
  if (overlap_pairs(buffers) > kSearchPairLimit) return start;
  Annealer a(buffers, start);
  if (!a.start(deadline)) {
    Plan unchanged = start;
    unchanged.cut_short = true;
    return unchanged;
  }
  Plan best;
  best.algorithm = "anneal";  // first fit in the start plan's order is already this search's
  best.offsets = a.offsets();
  int64_t best_height = a.height();
  const size_t n = a.size();
  if (n < 2) return best;

  // Temperatures relative to the typical buffer: early on a move that costs a buffer's height
  // passes often, at the end almost never.
  double mean_size = 0;
  for (const Buffer& b : buffers) mean_size += static_cast<double>(b.size);
  mean_size /= static_cast<double>(buffers.size());
  const double t_start = 0.3 * mean_size;
  const double t_end = 0.001 * mean_size;
  const auto begin = std::chrono::steady_clock::now();
  const double budget = std::max(1e-3, deadline.seconds_left());

  std::mt19937_64 rng(limits.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Annealer::Snapshot snapshot;
  double progress = 0;
  for (uint64_t it = 0; limits.max_iterations == 0 || it < limits.max_iterations; ++it) {
    // Every move: one re-decodes a suffix of the order, which on a big instance costs far more
    // than reading the clock (every 64 moves overran a 2 s limit by 26 s on 10^4 buffers).
    if (deadline.passed()) break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    progress = limits.max_iterations > 0
                   ? static_cast<double>(it) / static_cast<double>(limits.max_iterations)
                   : elapsed / budget;
    const double temperature = t_start * std::pow(t_end / t_start, std::min(1.0, progress));
    const size_t i = static_cast<size_t>(rng() % n);
    // Mostly short moves: the decoding of far-apart positions interacts little.
    size_t j = i;
    while (j == i) {
      if (unit(rng) < 0.8) {
        const int64_t reach = std::max<int64_t>(2, static_cast<int64_t>(n) / 10);
        const int64_t d =
            static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * reach + 1)) - reach;
        j = static_cast<size_t>(
            std::clamp<int64_t>(static_cast<int64_t>(i) + d, 0, static_cast<int64_t>(n) - 1));
      } else {
        j = static_cast<size_t>(rng() % n);
      }
    }
    const bool swap = (rng() & 1) != 0;
    const double before = a.energy();
    a.save(std::min(i, j), snapshot);
    a.apply(i, j, swap);
    const double delta = a.energy() - before;
    if (delta > 0 && unit(rng) >= std::exp(-delta / temperature)) {
      a.restore(snapshot);
      continue;
    }
    if (a.height() < best_height) {
      best_height = a.height();
      best.offsets = a.offsets();
    }
  }
  return best;
}

}  // namespace footprint::plan::detail
