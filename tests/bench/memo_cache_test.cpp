// The memo cache: lazy creation, explicit eviction, LRU under a byte budget, dependencies kept
// alive by the memos built from them.
#include "footprint/bench/memo_cache.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "footprint/core/error.hpp"

namespace footprint::bench {
namespace {

struct Counted {
  explicit Counted(int* live) : live_(live) { ++*live_; }
  ~Counted() { --*live_; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  int* live_;
};

TEST(MemoCache, CreatesLazilyAndEvictsOnRequest) {
  int live = 0;
  MemoCache cache;
  cache.define<Counted>("a", [&](MemoCache&) { return std::make_unique<Counted>(&live); });
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(live, 0);
  Counted& a = cache.get<Counted>("a");
  EXPECT_EQ(&a, &cache.get<Counted>("a"));  // created once
  EXPECT_EQ(live, 1);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(cache.evict("a"));
  EXPECT_FALSE(cache.evict("a"));
  EXPECT_EQ(live, 0);
  EXPECT_EQ(cache.size(), 0u);
  (void)cache.get<Counted>("a");  // again after eviction
  EXPECT_EQ(cache.creations(), 2u);
  cache.clear();
  EXPECT_EQ(live, 0);
}

TEST(MemoCache, UndefinedKeyIsAnError) {
  MemoCache cache;
  EXPECT_THROW((void)cache.get<int>("nope"), Error);
}

TEST(MemoCache, BudgetEvictsTheLeastRecentlyUsed) {
  // Each memo counts its hint plus the few heap bytes it takes: two fit, three do not.
  MemoCache cache(/*budget_bytes=*/2500);
  for (const char* k : {"a", "b", "c"}) {
    cache.define<int>(
        k, [](MemoCache&) { return std::make_unique<int>(1); }, 1000);
  }
  (void)cache.get<int>("a");
  (void)cache.get<int>("b");
  (void)cache.get<int>("a");  // a is now more recent than b
  (void)cache.get<int>("c");  // three do not fit: b goes
  EXPECT_TRUE(cache.contains("a"));
  EXPECT_FALSE(cache.contains("b"));
  EXPECT_TRUE(cache.contains("c"));
  EXPECT_LE(cache.bytes(), 2500u);
}

TEST(MemoCache, AMemoKeepsItsDependencyAliveAfterTheDependencyIsEvicted) {
  int live = 0;
  MemoCache cache;
  cache.define<Counted>("model", [&](MemoCache&) { return std::make_unique<Counted>(&live); });
  cache.define<std::shared_ptr<Counted>>("session", [](MemoCache& c) {
    return std::make_unique<std::shared_ptr<Counted>>(c.get_shared<Counted>("model"));
  });
  (void)cache.get<std::shared_ptr<Counted>>("session");
  EXPECT_EQ(cache.size(), 2u);
  cache.evict("model");
  EXPECT_EQ(live, 1);  // the session still holds it
  cache.evict("session");
  EXPECT_EQ(live, 0);
}

}  // namespace
}  // namespace footprint::bench
