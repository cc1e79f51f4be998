#include "time_index.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

#include "free_space.hpp"
#include "sections.hpp"

namespace footprint::plan::detail {
namespace {

// The top nodes, whose path unions are kept, are at least kCachedBelow levels above the leaves
// (one serves the queries of 64 sections or more) and at most kTopLevels below the root (at most
// 256 of them). Beyond 4 kept spans and 2 logged spans a buffer (96 bytes, over the floor of
// 64Ki each) nothing more is kept or logged: measured on training-like traces of 10^5 buffers,
// more neither speeds the placement up nor fits at 10^6 buffers in the memory it should.
constexpr uint32_t kCachedBelow = 6;
constexpr uint32_t kTopLevels = 8;
constexpr size_t kCachedSpansPerBuffer = 4;
constexpr size_t kLoggedPerBuffer = 2;
constexpr size_t kCachedSpansAtLeast = 1 << 16;
// Nothing stored for the lowest kFlatLevels heights (the query reads the buffers starting in up
// to 2^kFlatLevels sections on either side, a few hundred); "any time" unions for the nodes at
// most kAnytimeDepth below the root (63 of them: a long buffer updates at most that many).
constexpr uint32_t kFlatLevels = 6;
constexpr uint32_t kAnytimeDepth = 5;
// A query whose runs but the path union have at most a 1/kShortRuns of its spans merges them and
// reads the path union once; else it takes the runs out of the free gaps.
constexpr size_t kShortRuns = 2;

const auto by_begin = [](const Span& x, const Span& y) { return x.begin < y.begin; };

// Adds `s` to a sorted union of disjoint spans, merging what it overlaps or touches.
void unite(std::vector<Span>& spans, Span s) {
  // The first span that ends at or after s.begin: everything before it stays as it is.
  auto first = std::lower_bound(spans.begin(), spans.end(), s.begin,
                                [](const Span& x, int64_t at) { return x.end < at; });
  auto last = first;
  while (last != spans.end() && last->begin <= s.end) {
    s.begin = std::min(s.begin, last->begin);
    s.end = std::max(s.end, last->end);
    ++last;
  }
  if (first == last) {
    spans.insert(first, s);
    return;
  }
  *first = s;
  spans.erase(first + 1, last);
}

// Writes the union of two runs sorted by begin to `out`, joining what overlaps or touches, and
// returns its end. The nodes' unions overlap one another a good deal (buffers met at different
// times share bytes), so each round of merging has less to copy than the one before.
Span* unite_runs(std::span<const Span> a, std::span<const Span> b, Span* out) {
  Span* const first = out;
  auto put = [&](const Span& s) {
    if (out != first && s.begin <= out[-1].end) {
      out[-1].end = std::max(out[-1].end, s.end);
    } else {
      *out++ = s;
    }
  };
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) put(a[i].begin < b[j].begin ? a[i++] : b[j++]);
  for (; i < a.size(); ++i) put(a[i]);
  for (; j < b.size(); ++j) put(b[j]);
  return out;
}

// Merges the runs of `spans` (run k is [bounds[k], bounds[k+1]), each sorted by begin) into
// their union, sorted and disjoint, a round of pairwise merges at a time.
void merge_runs(std::vector<Span>& spans, std::vector<size_t>& bounds, std::vector<Span>& scratch) {
  while (bounds.size() > 2) {
    scratch.resize(spans.size());
    const std::span<const Span> all(spans);
    auto run = [&](size_t k) { return all.subspan(bounds[k], bounds[k + 1] - bounds[k]); };
    Span* out = scratch.data();
    size_t kept = 0;
    for (size_t k = 0; k + 1 < bounds.size(); k += 2) {
      const size_t begin = static_cast<size_t>(out - scratch.data());
      out = unite_runs(run(k), k + 2 < bounds.size() ? run(k + 1) : std::span<const Span>(), out);
      bounds[kept++] = begin;
    }
    const size_t size = static_cast<size_t>(out - scratch.data());
    bounds[kept++] = size;
    bounds.resize(kept);
    scratch.resize(size);
    spans.swap(scratch);
  }
}

}  // namespace

TimeIndex::Limits TimeIndex::default_limits(size_t buffers) {
  return {.kept_spans = std::max(kCachedSpansAtLeast, kCachedSpansPerBuffer * buffers),
          .logged_spans = std::max(kCachedSpansAtLeast, kLoggedPerBuffer * buffers)};
}

TimeIndex::TimeIndex(std::span<const Buffer> buffers, Limits limits)
    : buffers_(buffers), first_(buffers.size(), 0), end_(buffers.size(), 0) {
  const Sections sections(buffers);
  leaves_ = std::bit_ceil(static_cast<uint32_t>(std::max<size_t>(1, sections.count())));
  by_first_.assign(sections.count() + 2, 0);
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size == 0) continue;
    first_[i] = static_cast<uint32_t>(sections.first(buffers[i]));
    end_[i] = static_cast<uint32_t>(sections.end(buffers[i]));
    ++by_first_[first_[i] + 1];
  }
  std::partial_sum(by_first_.begin(), by_first_.end(), by_first_.begin());
  slot_.assign(buffers.size(), 0);
  slot_span_.assign(by_first_.back(), Span{0, 0});
  std::vector<uint32_t> next(by_first_.begin(), by_first_.end() - 1);
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size > 0) slot_[i] = next[first_[i]]++;
  }
  covers_.resize(2 * static_cast<size_t>(leaves_));
  starts_end_ = std::max<uint32_t>(1, leaves_ >> (kFlatLevels - 1));
  starts_.resize(starts_end_);
  anytime_.resize(std::min<size_t>(size_t{2} << kAnytimeDepth, starts_end_));
  const uint32_t depth = static_cast<uint32_t>(std::bit_width(leaves_)) - 1;
  cache_shift_ =
      std::min(depth, std::max(kCachedBelow, depth > kTopLevels ? depth - kTopLevels : 0));
  const size_t tops = leaves_ >> cache_shift_;
  path_unions_.resize(tops);
  made_at_.assign(tops, 0);
  log_.resize(2 * tops);
  kept_limit_ = limits.kept_spans;
  log_limit_ = limits.logged_spans;
}

const std::vector<Span>& TimeIndex::path_union(uint32_t top) {
  const size_t slot = top - path_unions_.size();
  uint64_t changed = 0;
  for (uint32_t node = top; node >= 1; node >>= 1) {
    if (!log_[node].empty()) changed = std::max(changed, log_[node].back().stamp);
  }
  std::vector<Span>& kept = path_unions_[slot];
  const uint64_t made = made_at_[slot];
  // Kept, and the log holds all that was added since (it may have been forgotten after).
  const bool logged_since = made > 0 && made > log_floor_;
  if (logged_since && made > changed) return kept;
  if (logged_since) {  // add what was added since
    kept_spans_ -= std::min(kept_spans_, kept.capacity());
    for (uint32_t node = top; node >= 1; node >>= 1) {
      const std::vector<Logged>& log = log_[node];
      auto since = std::upper_bound(log.begin(), log.end(), made,
                                    [](uint64_t at, const Logged& e) { return at < e.stamp; });
      for (; since != log.end(); ++since) unite(kept, since->span);
    }
    made_at_[slot] = ++clock_;
    kept_spans_ += kept.capacity();
    return kept;
  }

  std::vector<Span>& work = work_;
  work.clear();
  bounds_.assign(1, 0);
  for (uint32_t node = top; node >= 1; node >>= 1) {
    if (covers_[node].empty()) continue;
    work.insert(work.end(), covers_[node].begin(), covers_[node].end());
    bounds_.push_back(work.size());
  }
  merge_runs(work, bounds_, scratch_);  // disjoint: the nodes' unions are, and so are merges
  if (kept_spans_ + work.size() > kept_limit_) return work;  // used once, not kept
  kept_spans_ -= std::min(kept_spans_, kept.capacity());
  kept.assign(work.begin(), work.end());
  kept_spans_ += kept.capacity();
  made_at_[slot] = ++clock_;
  return kept;
}

void TimeIndex::add(uint32_t i, Span taken) {
  auto cover = [&](uint32_t node) {
    unite(covers_[node], taken);
    if (node >= log_.size()) return;
    if (logged_ >= log_limit_) {  // forget it all: the kept unions made before are made again
      for (std::vector<Logged>& log : log_) std::vector<Logged>().swap(log);
      logged_ = 0;
      log_floor_ = clock_;
    }
    log_[node].push_back({++clock_, taken});
    ++logged_;
  };
  for (uint32_t l = first_[i] + leaves_, r = end_[i] + leaves_; l < r; l >>= 1, r >>= 1) {
    if (l & 1) cover(l++);
    if (r & 1) cover(--r);
  }
  slot_span_[slot_[i]] = taken;
  for (uint32_t node = (first_[i] + leaves_) >> kFlatLevels; keeps_starts(node); node >>= 1) {
    unite(starts_[node], taken);
  }
  add_anytime(1, 0, leaves_, first_[i], end_[i], taken);
}

void TimeIndex::add_anytime(uint32_t node, uint32_t lo, uint32_t hi, uint32_t first, uint32_t end,
                            Span taken) {
  if (hi <= first || end <= lo || node >= anytime_.size()) return;
  unite(anytime_[node], taken);
  const uint32_t mid = lo + (hi - lo) / 2;
  add_anytime(2 * node, lo, mid, first, end, taken);
  add_anytime(2 * node + 1, mid, hi, first, end, taken);
}

std::span<const Span> TimeIndex::starting_in(uint32_t first, uint32_t end,
                                             std::vector<Span>& run) const {
  run.clear();
  for (uint32_t k = by_first_[first]; k < by_first_[end]; ++k) {
    if (slot_span_[k].end > 0) run.push_back(slot_span_[k]);  // placed
  }
  join(run);
  return run;
}

const std::vector<Span>& TimeIndex::gather(uint32_t i) {
  const uint32_t leaf = first_[i] + leaves_;
  const std::vector<Span>& path = path_union(leaf >> cache_shift_);
  runs_.clear();
  solid_runs_ = 0;
  auto add_run = [&](std::span<const Span> run) {
    if (!run.empty()) runs_.push_back(run);
  };
  // An "any time" union goes before the others, so that the highest node's (met last) is first.
  auto add_node = [&](uint32_t node) {
    if (node >= anytime_.size()) return add_run(starts_[node]);
    if (anytime_[node].empty()) return;
    runs_.insert(runs_.begin(), anytime_[node]);
    ++solid_runs_;
  };
  for (uint32_t node = leaf; node > leaf >> cache_shift_; node >>= 1) add_run(covers_[node]);
  // The canonical nodes of [first + 1, end): near the leaves, the sections they cover on either
  // side are read as one run each.
  uint32_t l = first_[i] + 1 + leaves_;
  uint32_t r = end_[i] + leaves_;
  uint32_t height = 0;
  for (; height < kFlatLevels && l < r; ++height, l >>= 1, r >>= 1) {
    l += l & 1;
    r -= r & 1;
  }
  if (l < r) {
    add_run(starting_in(first_[i] + 1, (l << height) - leaves_, left_));
    add_run(starting_in((r << height) - leaves_, end_[i], right_));
  } else {
    add_run(starting_in(first_[i] + 1, end_[i], left_));
  }
  for (; l < r; l >>= 1, r >>= 1) {
    if (l & 1) add_node(l++);
    if (r & 1) add_node(--r);
  }
  return path;
}

void TimeIndex::taken_meeting(uint32_t i, std::vector<Span>& out) {
  const std::vector<Span>& path = gather(i);
  out.assign(path.begin(), path.end());
  for (const std::span<const Span> run : runs_) out.insert(out.end(), run.begin(), run.end());
  std::sort(out.begin(), out.end(), by_begin);
}

int64_t TimeIndex::choose_offset(uint32_t i, Fit fit) {
  const Buffer& b = buffers_[i];
  const std::vector<Span>& path = gather(i);
  size_t spans = 0;
  for (const std::span<const Span> run : runs_) spans += run.size();
  if (spans * kShortRuns <= path.size()) {
    small_.clear();
    bounds_.assign(1, 0);
    for (const std::span<const Span> run : runs_) {
      small_.insert(small_.end(), run.begin(), run.end());
      bounds_.push_back(small_.size());
    }
    merge_runs(small_, bounds_, scratch_);
    return choose_among(path, small_, b, fit);
  }
  if (!path.empty()) runs_.emplace_back(path);
  // The "any time" unions first (gather put them there): they are nearly solid and leave few
  // gaps for the others to cut. Then the others, the fewest spans first.
  std::sort(runs_.begin() + static_cast<ptrdiff_t>(solid_runs_), runs_.end(),
            [](std::span<const Span> x, std::span<const Span> y) { return x.size() < y.size(); });
  free_.reset(runs_.front(), b.size);
  for (size_t k = 1; k < runs_.size(); ++k) free_.take_out(runs_[k]);
  return free_.choose(b, fit);
}

}  // namespace footprint::plan::detail
