// Loading never copies initializer bytes: whichever the source, tensor payloads are spans into
// it, and a failed load leaves the caller's source untouched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "footprint/core/error.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "test_support.hpp"
#include "tiny_cnn.hpp"

namespace footprint {
namespace {

bool inside(std::span<const std::byte> inner, std::span<const std::byte> outer) {
  return inner.data() >= outer.data() && inner.data() + inner.size() <= outer.data() + outer.size();
}

void expect_weights_are_views(const onnx::Model& m) {
  ASSERT_FALSE(m.graph().initializers.empty());
  for (const onnx::TensorProto& t : m.graph().initializers) {
    const auto view = onnx::tensor_view(t);
    ASSERT_FALSE(view.empty()) << t.name;
    EXPECT_TRUE(inside(view, m.source().bytes())) << t.name << " is not a view of the source";
    onnx::TensorBytes b = onnx::tensor_bytes(t);
    EXPECT_TRUE(b.is_view()) << t.name;
    EXPECT_EQ(b.bytes().data(), view.data());
  }
}

TEST(ModelSource, BorrowedBytesAreNotCopied) {
  const auto bytes = examples::make_tiny_cnn();
  auto m = onnx::load(onnx::ModelSource::borrow(bytes, "tiny"));
  EXPECT_EQ(m.source().bytes().data(), bytes.data());
  expect_weights_are_views(m);
  EXPECT_FALSE(m.source().is_mapped());
}

TEST(ModelSource, MappedFileIsNotCopied) {
  testing::TempDir dir;
  const auto path = dir.path() / "tiny.onnx";
  testing::write_file(path, examples::make_tiny_cnn());
  auto m = onnx::load_file(path);
  EXPECT_TRUE(m.source().is_mapped());
  expect_weights_are_views(m);
}

// A reader that copied some bytes (packed weights) gives their pages back: only whole pages
// inside the range, only for a mapped file, and what bytes() shows never changes.
TEST(ModelSource, ReleasedPagesReadBackFromTheFile) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<std::byte> content(5 * page);
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<std::byte>(i * 7 % 251);
  testing::TempDir dir;
  testing::write_file(dir.path() / "pages.bin", content);
  const auto mapped = onnx::ModelSource::map_file(dir.path() / "pages.bin");
  const auto bytes = mapped.bytes();
  ASSERT_EQ(bytes.size(), content.size());
  // From the middle of page 0 to the middle of page 4: pages 1, 2 and 3 go.
  EXPECT_EQ(mapped.release_pages(bytes.subspan(page / 2, 4 * page)), 3 * page);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), content.begin()));
  EXPECT_EQ(mapped.release_pages(bytes.subspan(page / 2, page)), 0u) << "no whole page inside";

  const auto borrowed = onnx::ModelSource::borrow(content, "borrowed");
  EXPECT_EQ(borrowed.release_pages(borrowed.bytes()), 0u) << "the caller's memory is not ours";
  EXPECT_EQ(mapped.release_pages(borrowed.bytes()), 0u) << "outside the mapping";
}

TEST(ModelSource, AdoptedBufferMovesIn) {
  auto bytes = examples::make_tiny_cnn();
  const std::byte* data = bytes.data();
  auto m = onnx::load(onnx::ModelSource::adopt(std::move(bytes), "tiny"));
  EXPECT_EQ(m.source().bytes().data(), data) << "the buffer moved, it was not copied";
  expect_weights_are_views(m);
}

TEST(ModelSource, FailedLoadLeavesTheSourceWithTheCaller) {
  auto bytes = examples::make_tiny_cnn();
  bytes.resize(bytes.size() / 2);
  const size_t size = bytes.size();
  auto source = onnx::ModelSource::adopt(std::move(bytes), "half");
  EXPECT_THROW(onnx::load(std::move(source)), Error);
  EXPECT_EQ(source.bytes().size(), size);  // NOLINT(bugprone-use-after-move): not moved on error
  EXPECT_TRUE(source.is_owned());
}

TEST(ModelSource, MissingFileIsAnError) {
  try {
    onnx::load_file("/nonexistent/model.onnx");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.onnx: cannot open"),
              std::string::npos);
  }
}

TEST(ModelSource, ModelIsMovableWithoutInvalidatingViews) {
  const auto bytes = examples::make_tiny_cnn();
  auto m = onnx::load(onnx::ModelSource::borrow(bytes));
  const onnx::TensorProto* first = &m.graph().initializers[0];
  onnx::Model moved = std::move(m);
  EXPECT_EQ(&moved.graph().initializers[0], first) << "the parsed tree does not move";
}

}  // namespace
}  // namespace footprint
