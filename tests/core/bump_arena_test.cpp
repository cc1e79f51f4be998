#include "footprint/core/bump_arena.hpp"

#include <gtest/gtest.h>

#include "footprint/core/counting_resource.hpp"

namespace footprint {
namespace {

TEST(BumpArena, PlacesSmallRequestsInOneChunk) {
  CountingResource counter;
  {
    BumpArena arena(&counter, 1024);
    for (int i = 0; i < 10; ++i) arena.allocate(64, 8);
    EXPECT_EQ(counter.allocations(), 1u);
    EXPECT_EQ(arena.reserved_bytes(), 1024u);
  }
  EXPECT_EQ(counter.current_bytes(), 0u) << "every chunk returns upstream when the arena dies";
}

TEST(BumpArena, GivesLargeRequestsTheirOwnChunk) {
  CountingResource counter;
  BumpArena arena(&counter, 512);
  void* small = arena.allocate(16, 8);
  void* big = arena.allocate(4000, 8);
  void* after = arena.allocate(16, 8);
  EXPECT_NE(small, nullptr);
  EXPECT_NE(big, nullptr);
  // The small request after the big one still fits the first chunk's tail.
  EXPECT_EQ(static_cast<char*>(after), static_cast<char*>(small) + 16);
  EXPECT_EQ(counter.allocations(), 2u);
}

TEST(BumpArena, HonoursAlignment) {
  BumpArena arena;
  arena.allocate(3, 1);
  auto* p = arena.allocate(8, 64);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
}

TEST(BumpArena, CopiesStrings) {
  BumpArena arena;
  std::string s = "hello";
  std::string_view v = arena.copy(s);
  s[0] = 'j';
  EXPECT_EQ(v, "hello");
}

TEST(BumpArena, MoveTransfersOwnership) {
  CountingResource counter;
  {
    BumpArena a(&counter, 256);
    a.allocate(10, 1);
    BumpArena b(std::move(a));
    EXPECT_EQ(b.reserved_bytes(), 256u);
    EXPECT_EQ(a.reserved_bytes(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  }
  EXPECT_EQ(counter.current_bytes(), 0u);
}

}  // namespace
}  // namespace footprint
