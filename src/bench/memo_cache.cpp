#include "footprint/bench/memo_cache.hpp"

#include <algorithm>

#include "footprint/core/heap_counter.hpp"

namespace footprint::bench {

void MemoCache::define_erased(const std::string& key, Factory make, uint64_t bytes_hint) {
  evict(key);
  factories_[key] = Definition{std::move(make), bytes_hint};
}

std::optional<uint64_t> MemoCache::bytes_of(const std::string& key) const {
  const auto it = live_.find(key);
  if (it == live_.end()) return std::nullopt;
  return it->second.bytes;
}

std::shared_ptr<void> MemoCache::acquire(const std::string& key) {
  const auto it = live_.find(key);
  if (it != live_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);  // most recently used now
    return it->second.value;
  }
  return create(key);
}

std::shared_ptr<void> MemoCache::create(const std::string& key) {
  const auto def = factories_.find(key);
  if (def == factories_.end()) throw Error("memo '" + key + "' is not defined");
  if (std::find(creating_.begin(), creating_.end(), key) != creating_.end())
    throw Error("memo '" + key + "' depends on itself");
  // The budget is checked against the size seen when it was last built (or the hint): the size
  // of a memo is only known once built, and evicting after building would hold both at once.
  make_room(def->second.bytes_hint);
  creating_.push_back(key);
  const uint64_t before = heap::snapshot().current_bytes;
  std::shared_ptr<void> value;
  try {
    value = def->second.make(*this);
  } catch (...) {
    creating_.pop_back();
    throw;
  }
  creating_.pop_back();
  const uint64_t after = heap::snapshot().current_bytes;
  // Dependencies built inside make() are entries of their own; nested growth is counted there
  // too, which overstates this memo but never understates the cache.
  const uint64_t grown = after > before ? after - before : 0;
  lru_.push_front(key);
  const uint64_t bytes = grown + def->second.bytes_hint;
  live_[key] = Entry{value, bytes, lru_.begin()};
  live_bytes_ += bytes;
  ++creations_;
  make_room(0);
  return value;
}

void MemoCache::make_room(uint64_t incoming) {
  if (budget_bytes_ == 0) return;
  // Never evict the memo just built (front) nor the ones being built around it.
  while (live_bytes_ + incoming > budget_bytes_ && lru_.size() > 1) {
    const std::string victim = lru_.back();
    if (std::find(creating_.begin(), creating_.end(), victim) != creating_.end()) break;
    evict(victim);
  }
}

bool MemoCache::evict(const std::string& key) {
  const auto it = live_.find(key);
  if (it == live_.end()) return false;
  live_bytes_ -= it->second.bytes;
  lru_.erase(it->second.lru);
  // Move the value out first: its destructor may touch the cache (it must not, but a dangling
  // map node would be worse).
  std::shared_ptr<void> value = std::move(it->second.value);
  live_.erase(it);
  ++evictions_;
  value.reset();
  return true;
}

void MemoCache::clear() {
  // Order does not matter: a memo built from another holds its own share of it.
  while (!lru_.empty()) evict(lru_.front());
}

}  // namespace footprint::bench
