// Data movement kernels on small hand-checked cases: views as copies, Transpose, Concat, Split,
// Slice, Gather*, Scatter*, Pad, Expand, Tile, Shape, Size, DepthToSpace, Trilu, OneHot, Resize.
#include <gtest/gtest.h>

#include "runtime/test_kernel_context.hpp"

namespace footprint::testing {
namespace {

const TestTensor k2x3 = f32({2, 3}, {1, 2, 3, 4, 5, 6});

TEST(DataMovementKernels, ViewsCopyAndDropoutMask) {
  const Ran r = run_f32("Reshape", {k2x3, i64({1}, {6})});
  EXPECT_EQ(r.dims, (std::vector<int64_t>{6}));
  expect_near(r.values, {1, 2, 3, 4, 5, 6});
  KernelRun d("Dropout", {k2x3}, {}, 13, 2);
  d.run();
  EXPECT_EQ(d.out(0).values<float>(), k2x3.values<float>());
  EXPECT_EQ(d.out(1).values<uint8_t>(), std::vector<uint8_t>(6, 1));
  // In place (the executor's usual case) is a no-op.
  KernelRun same("Identity", {k2x3});
  same.in_place().run();
  EXPECT_EQ(same.out(0).values<float>(), k2x3.values<float>());
}

TEST(DataMovementKernels, Transpose) {
  expect_near(run_f32("Transpose", {k2x3}).values, {1, 4, 2, 5, 3, 6});
  const Ran t = run_f32("Transpose", {f32({2, 3, 2}, iota(12))},
                        {attr("perm", std::vector<int64_t>{1, 0, 2})});
  EXPECT_EQ(t.dims, (std::vector<int64_t>{3, 2, 2}));
  expect_near(t.values, {0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11});
}

// The last two axes swapped on matrices of at least 32 x 32 run the tiled path (attention's
// keys): every element lands where the strided walk puts it, for 1-, 4- and 8-byte elements and
// extents that are no multiple of the tile.
TEST(DataMovementKernels, TransposeOfTheLastTwoAxesInTiles) {
  constexpr int64_t kBatch = 3, kRows = 70, kCols = 45;
  const auto n = static_cast<size_t>(kBatch * kRows * kCols);
  const std::vector<int64_t> perm{0, 2, 1};
  auto want = [&](size_t i) {  // the input index output element i reads
    const auto b = static_cast<int64_t>(i) / (kRows * kCols);
    const auto rest = static_cast<int64_t>(i) % (kRows * kCols);
    const int64_t c = rest / kRows, r = rest % kRows;
    return static_cast<size_t>((b * kRows + r) * kCols + c);
  };
  std::vector<int64_t> i64s(n);
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) {
    i64s[i] = static_cast<int64_t>(i) * 7 - 3;
    bytes[i] = static_cast<uint8_t>(i * 13);
  }
  const Ran f = run_f32("Transpose", {f32({kBatch, kRows, kCols}, iota(n))}, {attr("perm", perm)});
  EXPECT_EQ(f.dims, (std::vector<int64_t>{kBatch, kCols, kRows}));
  KernelRun l("Transpose", {i64({kBatch, kRows, kCols}, i64s)}, {attr("perm", perm)});
  l.run();
  KernelRun u("Transpose", {u8({kBatch, kRows, kCols}, bytes)}, {attr("perm", perm)});
  u.run();
  const std::vector<int64_t> lv = l.out(0).values<int64_t>();
  const std::vector<uint8_t> uv = u.out(0).values<uint8_t>();
  ASSERT_EQ(f.values.size(), n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(f.values[i], static_cast<float>(want(i))) << i;
    ASSERT_EQ(lv[i], i64s[want(i)]) << i;
    ASSERT_EQ(uv[i], bytes[want(i)]) << i;
  }
}

TEST(DataMovementKernels, ConcatAndSplit) {
  expect_near(
      run_f32("Concat", {f32({2, 1}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})}, {attr("axis", 1)}).values,
      {1, 3, 4, 2, 5, 6});
  expect_near(run_f32("Concat", {f32({1, 2}, {1, 2}), f32({0, 2}, {}), f32({1, 2}, {3, 4})}).values,
              {1, 2, 3, 4});
  KernelRun s("Split", {k2x3, i64({2}, {1, 2})}, {attr("axis", 1)}, 13, 2);
  s.run();
  EXPECT_EQ(s.out(0).values<float>(), (std::vector<float>{1, 4}));
  EXPECT_EQ(s.out(1).values<float>(), (std::vector<float>{2, 3, 5, 6}));
  KernelRun eq("Split", {f32({4}, {1, 2, 3, 4})}, {}, 11, 2);
  eq.run();
  EXPECT_EQ(eq.out(1).values<float>(), (std::vector<float>{3, 4}));
}

TEST(DataMovementKernels, Slice) {
  // Negative step from 8 down to (not including) 1, by 3.
  expect_near(run_f32("Slice", {f32({10}, iota(10)), i64({1}, {8}), i64({1}, {1}), std::nullopt,
                                i64({1}, {-3})})
                  .values,
              {8, 5, 2});
  expect_near(run_f32("Slice", {k2x3, i64({1}, {1}), i64({1}, {INT64_MAX}), i64({1}, {1})}).values,
              {2, 3, 5, 6});
  // Reversed whole axis.
  expect_near(
      run_f32("Slice", {k2x3, i64({1}, {-1}), i64({1}, {INT64_MIN}), i64({1}, {0}), i64({1}, {-1})})
          .values,
      {4, 5, 6, 1, 2, 3});
  // Opset 1: attributes.
  expect_near(
      run_f32(
          "Slice", {k2x3},
          {attr("starts", std::vector<int64_t>{0, 1}), attr("ends", std::vector<int64_t>{1, 3})}, 1)
          .values,
      {2, 3});
}

TEST(DataMovementKernels, GatherFamily) {
  const TestTensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const Ran g = run_f32("Gather", {x, i64({2, 2}, {0, 2, -1, 1})});
  EXPECT_EQ(g.dims, (std::vector<int64_t>{2, 2, 2}));
  expect_near(g.values, {1, 2, 5, 6, 5, 6, 3, 4});
  expect_near(run_f32("Gather", {x, i32({1}, {1})}, {attr("axis", 1)}).values, {2, 4, 6});
  KernelRun bad("Gather", {x, i64({1}, {3})});
  EXPECT_NE(bad.run_error().find("out of range"), std::string::npos);
  expect_near(run_f32("GatherElements", {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0})},
                      {attr("axis", 1)})
                  .values,
              {1, 1, 4, 3});
  const TestTensor d = f32({2, 2}, {0, 1, 2, 3});
  expect_near(run_f32("GatherND", {d, i64({2, 2}, {0, 0, 1, 1})}).values, {0, 3});
  expect_near(run_f32("GatherND", {d, i64({2, 1}, {1, 0})}).values, {2, 3, 0, 1});
  // batch_dims 1: one index per batch row.
  expect_near(run_f32("GatherND", {d, i64({2, 1}, {1, 0})}, {attr("batch_dims", 1)}).values,
              {1, 2});
}

TEST(DataMovementKernels, ScatterFamily) {
  expect_near(run_f32("ScatterElements",
                      {f32({3, 3}, std::vector<float>(9, 0)), i64({2, 3}, {1, 0, 2, 0, 2, 1}),
                       f32({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f})})
                  .values,
              {2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f});
  expect_near(
      run_f32("ScatterElements",
              {f32({1, 5}, {1, 2, 3, 4, 5}), i64({1, 2}, {1, 1}), f32({1, 2}, {1.1f, 2.1f})},
              {attr("axis", 1), attr("reduction", "add")})
          .values,
      {1, 5.2f, 3, 4, 5});
  expect_near(run_f32("ScatterND", {f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), i64({4, 1}, {4, 3, 1, 7}),
                                    f32({4}, {9, 10, 11, 12})})
                  .values,
              {1, 11, 3, 10, 9, 6, 7, 12});
}

TEST(DataMovementKernels, Pad) {
  const TestTensor x = f32({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f});
  const TestTensor pads = i64({4}, {0, 2, 0, 0});
  expect_near(run_f32("Pad", {x, pads}, {attr("mode", "reflect")}).values,
              {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f});
  expect_near(run_f32("Pad", {x, pads}, {attr("mode", "edge")}).values,
              {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f});
  expect_near(run_f32("Pad", {f32({1, 2}, {1, 2}), i64({4}, {1, 0, 0, 1}), f32({}, {9})}).values,
              {9, 9, 9, 1, 2, 9});
  expect_near(run_f32("Pad", {f32({1, 2}, {1, 2})},
                      {attr("pads", std::vector<int64_t>{0, 1, 0, 0}), attr_float("value", 7)}, 2)
                  .values,
              {7, 1, 2});
}

// Pad and Concat split their rows across threads: each chunk starts at its own row (the pad's
// outer coordinates decomposed from it), so two threads give what one gives, padding and order
// included.
TEST(DataMovementKernels, PadAndConcatOnTwoThreadsGiveWhatOneGives) {
  // Large enough that each of two threads gets a MiB of output (kParallelCopyBytes).
  std::vector<float> v(size_t{2048} * 64 * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const TestTensor x = f32({2048, 64, 3}, v);
  auto run = [&](const std::string& op, std::vector<std::optional<TestTensor>> in,
                 std::vector<Wire> attrs, int threads) {
    KernelRun k(op, std::move(in), std::move(attrs), 18);
    k.threads(threads).run();
    EXPECT_EQ(k.allocations(), 0u) << op;
    return k.out(0).values<float>();
  };
  // One row of the constant before each [3] row, two after, and a whole [64, 3] plane after.
  const TestTensor pads = i64({6}, {0, 0, 1, 1, 0, 2});
  // OpenMP makes its team of two on the first region that asks for one, on the heap: once per
  // process, before the counted runs.
  {
    KernelRun warm("Pad", {x, pads}, {}, 18);
    warm.threads(2).run();
  }
  const std::vector<float> one = run("Pad", {x, pads}, {}, 1);
  const std::vector<float> two = run("Pad", {x, pads}, {}, 2);
  EXPECT_EQ(one, two);
  ASSERT_EQ(one.size(), size_t{2049} * 64 * 6);
  EXPECT_EQ(one[0], 0.0F);
  EXPECT_EQ(one[1], 0.0F) << "the constant before the first row";
  EXPECT_EQ(one[1 * 6 + 1], 3.0F) << "row 1 of the first plane: x[0, 1, 0]";
  EXPECT_EQ(one[(2048 * 64 + 5) * 6 + 2], 0.0F) << "the padded plane";
  EXPECT_EQ(one[(2047 * 64 + 63) * 6 + 3], v[(2047 * 64 + 63) * 3 + 2]) << "the last row";
  const std::vector<float> cat_one = run("Concat", {x, x}, {attr("axis", int64_t{2})}, 1);
  const std::vector<float> cat_two = run("Concat", {x, x}, {attr("axis", int64_t{2})}, 2);
  EXPECT_EQ(cat_one, cat_two);
  ASSERT_EQ(cat_one.size(), 2 * v.size());
  EXPECT_EQ(cat_one[6 * 5000 + 4], v[3 * 5000 + 1]);
}

TEST(DataMovementKernels, ExpandAndTile) {
  const Ran e = run_f32("Expand", {f32({3, 1}, {1, 2, 3}), i64({3}, {2, 1, 2})});
  EXPECT_EQ(e.dims, (std::vector<int64_t>{2, 3, 2}));
  expect_near(e.values, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  expect_near(run_f32("Tile", {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {2, 2})}).values,
              {1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4});
}

TEST(DataMovementKernels, ShapeAndSize) {
  const TestTensor x = f32({2, 3, 4}, std::vector<float>(24, 0));
  KernelRun shape("Shape", {x}, {attr("start", 1)});
  shape.run();
  EXPECT_EQ(shape.out(0).values<int64_t>(), (std::vector<int64_t>{3, 4}));
  KernelRun size("Size", {x});
  size.run();
  EXPECT_EQ(size.out(0).values<int64_t>(), (std::vector<int64_t>{24}));
}

TEST(DataMovementKernels, DepthSpace) {
  const TestTensor x = f32({1, 8, 1, 1}, iota(8));
  expect_near(run_f32("DepthToSpace", {x}, {attr("blocksize", 2)}).values,
              {0, 2, 4, 6, 1, 3, 5, 7});
  expect_near(run_f32("DepthToSpace", {x}, {attr("blocksize", 2), attr("mode", "CRD")}).values,
              {0, 1, 2, 3, 4, 5, 6, 7});
  expect_near(run_f32("SpaceToDepth", {f32({1, 2, 2, 2}, iota(8))}, {attr("blocksize", 2)}).values,
              {0, 4, 1, 5, 2, 6, 3, 7});
}

TEST(DataMovementKernels, TriluAndOneHot) {
  const TestTensor m = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_near(run_f32("Trilu", {m}).values, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  expect_near(run_f32("Trilu", {m, i64({}, {-1})}, {attr("upper", 0)}).values,
              {0, 0, 0, 4, 0, 0, 7, 8, 0});
  const Ran h = run_f32("OneHot", {i64({3}, {0, 2, -1}), i64({}, {3}), f32({2}, {0, 1})});
  EXPECT_EQ(h.dims, (std::vector<int64_t>{3, 3}));
  expect_near(h.values, {1, 0, 0, 0, 0, 1, 0, 0, 1});
  expect_near(
      run_f32("OneHot", {f32({2}, {1, 0}), f32({}, {2}), f32({2}, {-1, 5})}, {attr("axis", 0)})
          .values,
      {-1, 5, 5, -1});
}

TEST(DataMovementKernels, ReverseSequence) {
  const TestTensor x = f32({4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15});
  expect_near(run_f32("ReverseSequence", {x, i64({4}, {4, 3, 2, 1})}).values,
              {3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15});
  // Batch first.
  expect_near(run_f32("ReverseSequence", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), i64({2}, {2, 3})},
                      {attr("batch_axis", 0), attr("time_axis", 1)})
                  .values,
              {2, 1, 3, 6, 5, 4});
}

TEST(DataMovementKernels, Resize) {
  const TestTensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const TestTensor scales = f32({4}, {1, 1, 2, 2});
  expect_near(run_f32("Resize", {x, std::nullopt, scales}).values,
              {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  expect_near(
      run_f32("Resize", {x, std::nullopt, scales}, {attr("mode", "linear")}).values,
      {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});
  // Sizes: align_corners linear from 2 to 3 columns.
  expect_near(
      run_f32("Resize", {x, std::nullopt, std::nullopt, i64({4}, {1, 1, 2, 3})},
              {attr("mode", "linear"), attr("coordinate_transformation_mode", "align_corners")})
          .values,
      {1, 1.5f, 2, 3, 3.5f, 4});
  // align_corners with scales: the resized length is 4 x 0.6 = 2.4, not the 2 columns output.
  expect_near(
      run_f32("Resize", {f32({1, 1, 1, 4}, {1, 2, 3, 4}), std::nullopt, f32({4}, {1, 1, 1, 0.6f})},
              {attr("mode", "linear"), attr("coordinate_transformation_mode", "align_corners")})
          .values,
      {1, 1 + 3 / 1.4f}, 1e-4f);
  // Cubic weights sum to 1, so a constant stays constant: over six resized dims (4^5 combined
  // outer taps, more than a row's buffer holds) too.
  KernelRun cubic("Resize",
                  {f32({2, 2, 2, 2, 2, 2}, std::vector<float>(64, 3)), std::nullopt,
                   f32({6}, {1.5f, 1.5f, 1.5f, 1.5f, 1.5f, 1.5f})},
                  {attr("mode", "cubic")});
  cubic.run();
  EXPECT_EQ(cubic.allocations(), 0u);
  expect_near(cubic.out(0).values<float>(), std::vector<float>(729, 3), 1e-4f);
  // Rows split over threads give the same result as one thread.
  const TestTensor big = f32({1, 3, 40, 50}, iota(6000));
  const TestTensor s2 = f32({4}, {1, 1, 2.5f, 1.5f});
  KernelRun one("Resize", {big, std::nullopt, s2}, {attr("mode", "linear")});
  one.run();
  KernelRun two("Resize", {big, std::nullopt, s2}, {attr("mode", "linear")});
  two.threads(2).run();
  EXPECT_EQ(one.out(0).values<float>(), two.out(0).values<float>());
  // Upsample-9: asymmetric, nearest rounds down.
  expect_near(run_f32("Upsample", {x, f32({4}, {1, 1, 2, 3})}, {}, 9).values,
              {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
}

}  // namespace
}  // namespace footprint::testing
