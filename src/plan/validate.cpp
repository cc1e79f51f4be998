#include "footprint/plan/validate.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

#include "footprint/core/error.hpp"

namespace footprint::plan {
namespace {

std::string describe(std::span<const Buffer> buffers, std::span<const int64_t> offsets, size_t i) {
  const Buffer& b = buffers[i];
  return "buffer " + in_quotes(b.id) + " [" + std::to_string(b.lower) + ", " +
         std::to_string(b.upper) + ") at bytes [" + std::to_string(offsets[i]) + ", " +
         std::to_string(offsets[i] + b.size) + ")";
}

std::optional<std::string> check_one(const Buffer& b, int64_t offset) {
  constexpr int64_t kLimit = int64_t{1} << 62;  // keeps offset + size from overflowing
  const std::string name = "buffer " + in_quotes(b.id);
  if (offset < 0) return name + " has negative offset " + std::to_string(offset);
  if (offset > kLimit) return name + " has offset " + std::to_string(offset) + ", above 2^62";
  if (b.alignment > 0 && offset % b.alignment != 0) {
    return name + " at offset " + std::to_string(offset) + " is not aligned to " +
           std::to_string(b.alignment);
  }
  if (b.fixed_offset && *b.fixed_offset != offset) {
    return name + " has fixed offset " + std::to_string(*b.fixed_offset) + " but was placed at " +
           std::to_string(offset);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> find_violation(std::span<const Buffer> buffers,
                                          std::span<const int64_t> offsets) {
  if (offsets.size() != buffers.size()) {
    return std::to_string(offsets.size()) + " offsets for " + std::to_string(buffers.size()) +
           " buffers";
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (auto v = check_one(buffers[i], offsets[i])) return v;
  }
  // Sweep time; the buffers live at any moment are disjoint in space, so a new one only needs
  // checking against its neighbours in offset order. Frees before allocations at equal times.
  struct Event {
    int64_t time;
    bool alloc;
    size_t index;
  };
  std::vector<Event> events;
  events.reserve(2 * buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size == 0 || buffers[i].upper <= buffers[i].lower) continue;
    events.push_back({buffers[i].lower, true, i});
    events.push_back({buffers[i].upper, false, i});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.alloc < b.alloc;
  });
  std::set<std::pair<int64_t, size_t>> live;  // (offset, buffer)
  for (const Event& e : events) {
    const std::pair<int64_t, size_t> key{offsets[e.index], e.index};
    if (!e.alloc) {
      live.erase(key);
      continue;
    }
    const auto next = live.lower_bound(key);
    const int64_t end = offsets[e.index] + buffers[e.index].size;
    std::optional<size_t> clash;
    if (next != live.end() && next->first < end) clash = next->second;
    if (next != live.begin()) {
      const auto prev = std::prev(next);
      if (prev->first + buffers[prev->second].size > offsets[e.index]) clash = prev->second;
    }
    if (clash) {
      return describe(buffers, offsets, *clash) + " overlaps " +
             describe(buffers, offsets, e.index);
    }
    live.insert(key);
  }
  return std::nullopt;
}

void validate_plan(std::span<const Buffer> buffers, std::span<const int64_t> offsets) {
  if (auto v = find_violation(buffers, offsets)) throw Error("invalid plan: " + *v);
}

}  // namespace footprint::plan
