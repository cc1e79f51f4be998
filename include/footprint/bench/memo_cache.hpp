#pragma once
// Memos: lazily created artifacts (a loaded model, a prepared session, a dataset) shared by
// benchmarks. The runner creates a memo right before its first user and evicts it right after
// its last, so a run over ten 16 GB models holds one at a time. The cache can also be bounded in
// bytes: creating a memo that would exceed the budget evicts the least recently used first.
//
//   bench::MemoCache cache;
//   cache.define<onnx::Model>("model:vgg19", [](MemoCache&) { return load(...); });
//   const onnx::Model& m = cache.get<onnx::Model>("model:vgg19");  // created on first get
//   cache.evict("model:vgg19");
//
// Values are held by shared_ptr so a memo built from another (a session from its model) can
// keep its dependency alive: evicting the model then only drops the cache's share.
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "footprint/core/error.hpp"

namespace footprint::bench {

class MemoCache {
 public:
  using Factory = std::function<std::shared_ptr<void>(MemoCache&)>;

  // budget_bytes 0: unbounded.
  explicit MemoCache(uint64_t budget_bytes = 0) : budget_bytes_(budget_bytes) {}
  MemoCache(const MemoCache&) = delete;
  MemoCache& operator=(const MemoCache&) = delete;
  ~MemoCache() { clear(); }

  // Registers how to build `key`. `bytes_hint` adds to what the counting allocator sees while
  // building (a mapped file is not heap). Redefining a live key evicts it.
  template <class T, class F>
  void define(const std::string& key, F make, uint64_t bytes_hint = 0) {
    define_erased(
        key,
        [make = std::move(make)](MemoCache& c) -> std::shared_ptr<void> {
          return std::shared_ptr<T>(make(c));
        },
        bytes_hint);
  }
  bool defined(const std::string& key) const { return factories_.count(key) != 0; }

  // The memo, created now if absent. Throws footprint::Error for an undefined key.
  template <class T>
  T& get(const std::string& key) {
    return *static_cast<T*>(acquire(key).get());
  }
  template <class T>
  std::shared_ptr<T> get_shared(const std::string& key) {
    return std::static_pointer_cast<T>(acquire(key));
  }
  // Creates the memo if absent (the runner calls it before a benchmark's first use).
  void ensure(const std::string& key) { (void)acquire(key); }

  bool contains(const std::string& key) const { return live_.count(key) != 0; }
  size_t size() const { return live_.size(); }    // live memos
  uint64_t bytes() const { return live_bytes_; }  // their recorded sizes
  uint64_t budget_bytes() const { return budget_bytes_; }
  std::optional<uint64_t> bytes_of(const std::string& key) const;
  // Drops the cache's share of the memo; false when it was not live.
  bool evict(const std::string& key);
  void clear();

  // Counts, for tests and records.
  uint64_t creations() const { return creations_; }
  uint64_t evictions() const { return evictions_; }

 private:
  struct Entry {
    std::shared_ptr<void> value;
    uint64_t bytes = 0;
    std::list<std::string>::iterator lru;  // position in lru_ (front: most recent)
  };
  void define_erased(const std::string& key, Factory make, uint64_t bytes_hint);
  std::shared_ptr<void> acquire(const std::string& key);
  std::shared_ptr<void> create(const std::string& key);
  void make_room(uint64_t incoming);

  struct Definition {
    Factory make;
    uint64_t bytes_hint = 0;
  };
  uint64_t budget_bytes_;
  std::map<std::string, Definition> factories_;
  std::map<std::string, Entry> live_;
  std::list<std::string> lru_;
  std::vector<std::string> creating_;  // keys being built (a cycle is an error)
  uint64_t live_bytes_ = 0;
  uint64_t creations_ = 0;
  uint64_t evictions_ = 0;
};

}  // namespace footprint::bench
