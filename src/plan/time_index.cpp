#include "time_index.hpp"

#include <algorithm>
#include <bit>

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
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size == 0) continue;
    first_[i] = static_cast<uint32_t>(sections.first(buffers[i]));
    end_[i] = static_cast<uint32_t>(sections.end(buffers[i]));
  }
  covers_.resize(2 * static_cast<size_t>(leaves_));
  starts_.resize(2 * static_cast<size_t>(leaves_));
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
  for (uint32_t node = first_[i] + leaves_; node >= 1; node >>= 1) unite(starts_[node], taken);
}

const std::vector<Span>& TimeIndex::gather(uint32_t i) {
  const uint32_t leaf = first_[i] + leaves_;
  const std::vector<Span>& path = path_union(leaf >> cache_shift_);  // first: it uses bounds_
  small_.clear();
  bounds_.assign(1, 0);
  auto append = [&](const std::vector<Span>& run) {
    if (run.empty()) return;
    small_.insert(small_.end(), run.begin(), run.end());
    bounds_.push_back(small_.size());
  };
  for (uint32_t node = leaf; node > leaf >> cache_shift_; node >>= 1) append(covers_[node]);
  for (uint32_t l = first_[i] + 1 + leaves_, r = end_[i] + leaves_; l < r; l >>= 1, r >>= 1) {
    if (l & 1) append(starts_[l++]);
    if (r & 1) append(starts_[--r]);
  }
  merge_runs(small_, bounds_, scratch_);
  return path;
}

void TimeIndex::taken_meeting(uint32_t i, std::vector<Span>& out) {
  const std::vector<Span>& path = gather(i);
  out.resize(path.size() + small_.size());
  std::merge(path.begin(), path.end(), small_.begin(), small_.end(), out.begin(), by_begin);
}

int64_t TimeIndex::choose_offset(uint32_t i, Fit fit) {
  const std::vector<Span>& path = gather(i);
  return detail::choose_offset(path, small_, buffers_[i], fit);
}

}  // namespace footprint::plan::detail
