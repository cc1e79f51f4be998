// The memory semantics of DESIGN.md, one rule per test, on hand-made programs of 16-byte
// tensors.
#include "footprint/analysis/timeline.hpp"

#include <gtest/gtest.h>

#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"

namespace footprint::analysis {
namespace {

class Program {
 public:
  int tensor(const std::string& name, Category c = Category::activations, uint64_t bytes = 16) {
    p_.tensors.push_back({name, bytes, c, -1, false});
    return static_cast<int>(p_.tensors.size()) - 1;
  }
  int view(const std::string& name, int of, Category c = Category::activations) {
    const int t = tensor(name, c);
    p_.tensors[t].view_of = of;
    return t;
  }
  ProgramStep& step(const std::string& name, std::vector<int> in, std::vector<int> out) {
    p_.steps.push_back({name, "op", std::move(in), std::move(out), 0, false, {}});
    return p_.steps.back();
  }
  MemoryProgram& get() { return p_; }

 private:
  MemoryProgram p_;
};

TEST(Timeline, FreesAfterTheLastConsumer) {
  Program p;
  const int x = p.tensor("x", Category::inputs);
  const int a = p.tensor("a");
  const int b = p.tensor("b");
  const int y = p.tensor("y", Category::outputs);
  p.step("A", {x}, {a});
  p.step("B", {a}, {b});
  p.step("C", {b}, {y});
  const Timeline t = simulate(p.get());
  ASSERT_EQ(t.steps.size(), 3u);
  EXPECT_EQ(t.steps[0].alloc_bytes, 16u);
  EXPECT_EQ(t.steps[0].free_bytes, 0u);
  EXPECT_EQ(t.steps[1].free_bytes, 16u) << "a dies after B, its last consumer";
  EXPECT_EQ(t.steps[1].live_bytes, 32u) << "a and b are both live during B";
  EXPECT_EQ(t.steps[2].live_bytes, 16u) << "the output is not an activation";
  EXPECT_EQ(t.lower_bound_bytes, 32u);
  EXPECT_EQ(t.total_peak_bytes, 48u) << "caller-held x + a + b";
  EXPECT_EQ(t.after_bytes, 32u) << "x (caller-held) and y (output)";
}

TEST(Timeline, DonatedInputsDieAfterTheirLastUse) {
  Program p;
  const int x = p.tensor("x", Category::inputs);
  const int a = p.tensor("a");
  const int y = p.tensor("y", Category::outputs);
  p.step("A", {x}, {a});
  p.step("B", {a}, {y});
  p.get().inputs = InputsPolicy::donated;
  const Timeline t = simulate(p.get());
  EXPECT_EQ(t.steps[0].free_bytes, 16u);
  EXPECT_EQ(t.steps[1].total_bytes, 32u) << "x is gone during B";
  EXPECT_EQ(t.after_bytes, 16u);
  p.get().inputs = InputsPolicy::caller;
  EXPECT_EQ(simulate(p.get()).after_bytes, 32u);
}

TEST(Timeline, ViewsAllocateNothingAndExtendTheirBuffer) {
  Program p;
  const int x = p.tensor("x", Category::inputs);
  const int a = p.tensor("a");
  const int v = p.view("v", a);
  const int b = p.tensor("b");
  const int y = p.tensor("y", Category::outputs);
  p.step("A", {x}, {a});
  p.step("Reshape", {a}, {v});
  p.step("B", {x}, {b});
  p.step("C", {v, b}, {y});
  const Timeline t = simulate(p.get());
  EXPECT_EQ(t.steps[1].alloc_bytes, 0u) << "the view allocates nothing";
  EXPECT_EQ(t.steps[1].free_bytes, 0u) << "a stays alive through its view";
  EXPECT_EQ(t.steps[3].free_bytes, 32u) << "a (through v) and b die after C";
  EXPECT_EQ(t.lower_bound_bytes, 32u);
}

TEST(Timeline, InPlaceReusesADyingInputOfTheSameSize) {
  Program p;
  const int x = p.tensor("x", Category::inputs);
  const int a = p.tensor("a");
  const int b = p.tensor("b");
  const int y = p.tensor("y", Category::outputs);
  p.step("A", {x}, {a});
  p.step("Relu", {a}, {b}).in_place = true;
  p.step("C", {b}, {y});
  const Timeline t = simulate(p.get());
  EXPECT_EQ(t.steps[1].alloc_bytes, 0u) << "b is written into a's buffer";
  EXPECT_EQ(t.lower_bound_bytes, 16u);
  // Not when the input is still needed later.
  Program q;
  const int qx = q.tensor("x", Category::inputs);
  const int qa = q.tensor("a");
  const int qb = q.tensor("b");
  const int qy = q.tensor("y", Category::outputs);
  q.step("A", {qx}, {qa});
  q.step("Relu", {qa}, {qb}).in_place = true;
  q.step("C", {qa, qb}, {qy});
  EXPECT_EQ(simulate(q.get()).lower_bound_bytes, 32u);
  // Never into a caller's input.
  Program r;
  const int rx = r.tensor("x", Category::inputs);
  const int rb = r.tensor("b");
  const int ry = r.tensor("y", Category::outputs);
  r.step("Relu", {rx}, {rb}).in_place = true;
  r.step("C", {rb}, {ry});
  EXPECT_EQ(simulate(r.get()).steps[0].alloc_bytes, 16u);
}

TEST(Timeline, WorkspaceLivesForItsStepOnly) {
  Program p;
  const int x = p.tensor("x", Category::inputs);
  const int a = p.tensor("a");
  const int y = p.tensor("y", Category::outputs);
  p.step("Conv", {x}, {a}).workspace = 100;
  p.step("B", {a}, {y});
  const Timeline t = simulate(p.get());
  EXPECT_EQ(t.steps[0].live_bytes, 116u);
  EXPECT_EQ(t.steps[1].live_bytes, 16u);
  EXPECT_EQ(t.workspace_peak_bytes, 100u);
  EXPECT_EQ(t.steps[0].live_arena_bytes, 128u + 64u) << "each buffer rounded up to 64 bytes";
  EXPECT_EQ(t.lower_bound_arena_bytes, 192u);
}

TEST(Timeline, WeightsAreCountedApartFromTheArena) {
  Program p;
  const int x = p.tensor("x", Category::inputs);
  const int w = p.tensor("w", Category::weights, 1000);
  const int y = p.tensor("y", Category::outputs);
  p.step("MatMul", {x, w}, {y});
  const Timeline t = simulate(p.get());
  EXPECT_EQ(t.weights_bytes, 1000u);
  EXPECT_EQ(t.lower_bound_bytes, 0u);
  EXPECT_EQ(t.total_peak_bytes, 1032u);
}

TEST(Timeline, AliveAtPeakSaysWhy) {
  Program p;
  const int x = p.tensor("x", Category::inputs);
  const int a = p.tensor("a");
  const int b = p.tensor("b");
  const int y = p.tensor("y", Category::outputs);
  p.step("A", {x}, {a});
  p.step("B", {x}, {b});
  p.step("C", {a, b}, {y});
  const Timeline t = simulate(p.get());
  EXPECT_EQ(t.peak_step, 2);
  ASSERT_EQ(t.alive_at_peak.size(), 4u);
  auto find = [&](const std::string& name) {
    for (const auto& a_ : t.alive_at_peak) {
      if (a_.tensor == name) return a_;
    }
    return AliveTensor{};
  };
  EXPECT_EQ(find("x").why, "caller-held input");
  EXPECT_EQ(find("y").why, "graph output");
  EXPECT_EQ(find("a").why, "read by this step");
  EXPECT_EQ(find("a").producer, "A");
  EXPECT_EQ(find("a").last_consumer, "C");
}

TEST(Timeline, WaitingForNamesTheNextConsumer) {
  Program p;
  const int x = p.tensor("x", Category::inputs);
  const int a = p.tensor("a", Category::activations, 100);
  const int b = p.tensor("b", Category::activations, 100);
  const int c = p.tensor("c");
  const int y = p.tensor("y", Category::outputs);
  p.step("A", {x}, {a});
  p.step("B", {x}, {b});
  p.step("C", {a}, {c});
  p.step("D", {b, c}, {y});
  const Timeline t = simulate(p.get());
  EXPECT_EQ(t.peak_step, 2);
  EXPECT_EQ(t.total_peak_bytes, 232u);
  bool found = false;
  for (const auto& alive : t.alive_at_peak) {
    if (alive.tensor != "b") continue;
    found = true;
    EXPECT_EQ(alive.why, "waiting for D at step 3");
    EXPECT_EQ(alive.bytes, 100u);
  }
  EXPECT_TRUE(found);
}

TEST(Timeline, ExplicitFreesFollowTheTrace) {
  Program p;
  const int x = p.tensor("x", Category::inputs);
  const int a = p.tensor("a");
  const int y = p.tensor("y", Category::outputs);
  p.step("A", {x}, {a});
  p.step("B", {a}, {y});  // never frees a
  p.get().explicit_frees = true;
  const Timeline t = simulate(p.get());
  EXPECT_EQ(t.after_bytes, 48u) << "x (caller), a (never freed), y";
  p.get().steps[0].frees = {a};
  EXPECT_THROW(simulate(p.get()), Error) << "a is freed after A but B reads it";
}

TEST(Timeline, RejectsInconsistentPrograms) {
  Program p;
  const int a = p.tensor("a");
  p.step("A", {}, {a});
  p.step("B", {}, {a});
  EXPECT_THROW(simulate(p.get()), Error) << "written twice";
  Program q;
  const int b = q.tensor("b");
  q.step("A", {b}, {});
  EXPECT_THROW(simulate(q.get()), Error) << "an activation nothing produces";
}

// Totals are checked sums: two buffers of 2^64-1 bytes are an error naming the step, never a
// wrapped "peak 30 B".
TEST(Timeline, TotalsThatOverflowAreErrorsNamingTheStep) {
  Program p;
  const int x = p.tensor("x", Category::inputs, 16);
  const int a = p.tensor("a", Category::activations, UINT64_MAX / 2);
  const int b = p.tensor("b", Category::activations, UINT64_MAX / 2 + 64);
  const int y = p.tensor("y", Category::outputs, 16);
  p.step("A", {x}, {a});
  p.step("B", {a}, {b});
  p.step("C", {b}, {y});
  try {
    (void)simulate(p.get());
    FAIL() << "no overflow reported";
  } catch (const SizeOverflow& e) {
    EXPECT_NE(std::string(e.what()).find("at step 1 'B'"), std::string::npos) << e.what();
  }
  Program q;
  const int in = q.tensor("in", Category::inputs, UINT64_MAX - 3);
  const int out = q.tensor("out", Category::outputs, 16);
  q.step("A", {in}, {out});
  try {
    (void)simulate(q.get());
    FAIL() << "no overflow reported";
  } catch (const SizeOverflow& e) {
    EXPECT_STREQ(e.what(),
                 "buffer 'in': 18446744073709551612 bytes rounded up to a multiple of 64 "
                 "overflows uint64");
  }
}

// The sweep adds each buffer at its first step and removes it after its last: the figures are
// those of counting every live buffer at every step.
TEST(Timeline, PerStepFiguresMatchACountOfLiveBuffers) {
  Program p;
  const int x = p.tensor("x", Category::inputs, 8);
  const int a = p.tensor("a", Category::activations, 100);
  const int b = p.tensor("b", Category::activations, 30);
  const int c = p.tensor("c", Category::activations, 5);
  const int y = p.tensor("y", Category::outputs, 1);
  p.step("A", {x}, {a});
  p.step("B", {a}, {b});
  p.step("C", {a, b}, {c}).workspace = 7;
  p.step("D", {c}, {y});
  const Timeline t = simulate(p.get());
  ASSERT_EQ(t.steps.size(), 4u);
  EXPECT_EQ(t.steps[0].live_bytes, 100u);
  EXPECT_EQ(t.steps[1].live_bytes, 130u);
  EXPECT_EQ(t.steps[2].live_bytes, 142u);
  EXPECT_EQ(t.steps[2].free_bytes, 130u);
  EXPECT_EQ(t.steps[2].live_arena_bytes, 320u);  // 128 + 64 + 64, and 64 of workspace
  EXPECT_EQ(t.steps[3].live_bytes, 5u);
  EXPECT_EQ(t.steps[3].total_bytes, 14u);
  EXPECT_EQ(t.activations_peak_bytes, 135u);
  EXPECT_EQ(t.total_peak_bytes, 150u);
  EXPECT_EQ(t.peak_step, 2);
}

}  // namespace
}  // namespace footprint::analysis
