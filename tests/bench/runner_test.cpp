// The runner: parameter grids and lists, tags, hooks, and memos created right before their
// first user and evicted right after their last.
#include "footprint/bench/runner.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "bench/run_options.hpp"
#include "footprint/core/heap_counter.hpp"

namespace footprint::bench {
namespace {

TEST(Registry, ParametrizeCallsFormAGridAndRowsAList) {
  Registry reg;
  reg.add("f", [](State&) {})
      .parametrize("a", {1, 2})
      .parametrize({"b", "c"},
                   {{Param("", "x"), Param("", 1.5)}, {Param("", "y"), Param("", 2.5)}});
  const auto cases = reg.benchmarks()[0]->cases();
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].get<int>("a"), 1);
  EXPECT_EQ(cases[0].get<std::string>("b"), "x");
  EXPECT_EQ(cases[1].get<std::string>("b"), "y");
  EXPECT_EQ(cases[1].get<double>("c"), 2.5);
  EXPECT_EQ(cases[3].get<int>("a"), 2);
  const auto planned = plan_cases(reg, {});
  EXPECT_EQ(planned[0].name, "f[a=1,b=x,c=1.5]");
}

TEST(Runner, TagsSelectBenchmarks) {
  Registry reg;
  reg.add("fast", [](State&) {}).tags({"quick"});
  reg.add("slow", [](State&) {}).tags({"long"});
  const RunRecords r = run(reg, [] {
    auto o = test_support::reps(1);
    o.tags = {"quick"};
    return o;
  }());
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].name, "fast");
}

TEST(Runner, HooksWrapTheRepetitions) {
  Registry reg;
  std::vector<std::string> log;
  reg.add("f", [&](State&) { log.push_back("body"); })
      .setup([&](State&) { log.push_back("setup"); })
      .teardown([&](State&) { log.push_back("teardown"); });
  const RunRecords r = run(reg, test_support::reps(2, 1));
  EXPECT_EQ(log, (std::vector<std::string>{"setup", "body", "body", "body", "teardown"}));
  ASSERT_EQ(r.records[0].wall_ms.size(), 2u);
  EXPECT_LE(r.records[0].wall.min, r.records[0].wall.median);
}

// Two models used by interleaved benchmarks: the runner groups each model's users, creates the
// model before its first user and evicts it after its last, so only one is ever alive.
TEST(Runner, MemosLiveExactlyAcrossTheirUsers) {
  Registry reg;
  std::vector<std::string> log;
  int alive = 0;
  int max_alive = 0;
  struct Model {
    Model(std::vector<std::string>* l, std::string n, int* a)
        : log(l), name(std::move(n)), alive(a) {
      log->push_back("create " + name);
      ++*alive;
    }
    ~Model() {
      log->push_back("evict " + name);
      --*alive;
    }
    std::vector<std::string>* log;
    std::string name;
    int* alive;
  };
  for (const std::string m : {"A", "B"}) {
    reg.memo<Model>("model:" + m, [&, m](MemoCache&) {
      auto p = std::make_unique<Model>(&log, m, &alive);
      max_alive = std::max(max_alive, alive);
      return p;
    });
  }
  for (const std::string m : {"A", "B", "A", "B"}) {
    reg.add("use" + m, [&, m](State& s) { (void)s.memo<Model>("model:" + m); })
        .uses({"model:" + m});
  }
  reg.add("other", [](State&) {});
  auto opts = test_support::reps(1, 0);
  opts.on_record = [&](const Record& rec) { log.push_back(rec.name); };
  const RunRecords r = run(reg, opts);
  EXPECT_EQ(max_alive, 1);
  EXPECT_EQ(log, (std::vector<std::string>{"other", "create A", "useA", "useA", "evict A",
                                           "create B", "useB", "useB", "evict B"}));
  EXPECT_EQ(r.memo_creations, 2u);
}

TEST(Runner, NoEvictKeepsMemosUntilTheEnd) {
  Registry reg;
  int alive = 0;
  int max_alive = 0;
  for (const std::string m : {"A", "B"}) {
    reg.memo<std::shared_ptr<int>>("m" + m, [&](MemoCache&) {
      max_alive = std::max(max_alive, ++alive);
      return std::make_unique<std::shared_ptr<int>>(std::shared_ptr<int>(new int(0), [&](int* p) {
        --alive;
        delete p;
      }));
    });
    reg.add("b" + m, [](State&) {}).uses({"m" + m});
  }
  (void)run(reg, [] {
    auto o = test_support::reps(1);
    o.evict = false;
    return o;
  }());
  EXPECT_EQ(max_alive, 2);
  EXPECT_EQ(alive, 0);  // released when the run ends
}

TEST(Runner, ACaseThatThrowsIsRecordedAndTheRunGoesOn) {
  Registry reg;
  reg.add("bad", [](State&) { throw std::runtime_error("boom"); });
  reg.add("good", [](State&) {});
  const RunRecords r = run(reg, test_support::reps(1));
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0].error, "boom");
  EXPECT_TRUE(r.records[1].error.empty());
}

TEST(Runner, HeapFiguresCountTheBody) {
  if (!heap::available()) GTEST_SKIP() << "needs the counting allocator";
  Registry reg;
  reg.add("alloc", [](State&) {
    auto v = std::make_unique<std::vector<char>>(1 << 20, 'x');
    asm volatile("" : : "r"(v->data()) : "memory");
  });
  const RunRecords r = run(reg, test_support::reps(3));
  EXPECT_GE(r.records[0].peak_heap_bytes, 1u << 20);
  EXPECT_LT(r.records[0].peak_heap_bytes, 2u << 20);
  EXPECT_GE(r.records[0].allocations, 4u);  // warmup + 3 repetitions
  EXPECT_LT(std::abs(r.records[0].net_heap_bytes), 64 * 1024);
  EXPECT_GT(r.records[0].peak_rss_bytes, 0u);
  EXPECT_FALSE(r.context.footprint_version.empty());
  EXPECT_FALSE(r.context.cpu.empty());
}

}  // namespace
}  // namespace footprint::bench
