// Files the user names: inputs are read only when regular (checked before a blocking open),
// outputs never replace what is not a regular file, and every -o has the same missing-folder
// rule.
#include "footprint/core/user_files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "footprint/core/error.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool is_char_device(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

void write_text(const std::filesystem::path& p, const std::string& text) {
  write_output_file(p, [&](std::ostream& out) { out << text; });
}

TEST(UserFiles, OnlyRegularFilesAreReadAndAFifoDoesNotBlock) {
  const testing::TempDir dir;
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Without O_NONBLOCK this open would wait forever for a writer.
  EXPECT_EQ(error_of([&] { (void)read_text_file(fifo); }),
            fifo.string() + ": a FIFO, not a regular file");
  EXPECT_EQ(error_of([&] { (void)read_text_file("/dev/zero"); }),
            "/dev/zero: a character device, not a regular file");
  EXPECT_EQ(error_of([&] { (void)read_file_bytes(dir.path()); }),
            dir.path().string() + ": a directory, not a regular file");
  EXPECT_EQ(error_of([&] { (void)read_text_file(dir.path() / "missing"); }),
            (dir.path() / "missing").string() + ": cannot open: No such file or directory");
  write_text(dir.path() / "a.txt", "hello");
  EXPECT_EQ(read_text_file(dir.path() / "a.txt"), "hello");
}

TEST(UserFiles, DevicesAreWrittenThroughNeverReplaced) {
  write_text("/dev/null", "discarded");
  EXPECT_TRUE(is_char_device("/dev/null"));
  EXPECT_EQ(error_of([] { write_text("/dev/full", "x"); }),
            "/dev/full: write failed: No space left on device");
  EXPECT_TRUE(is_char_device("/dev/full"));
  append_output_file("/dev/null", "line\n");
  EXPECT_TRUE(is_char_device("/dev/null"));
}

TEST(UserFiles, OutputsRefuseDirectoriesMissingFoldersAndUnreadFifos) {
  const testing::TempDir dir;
  EXPECT_EQ(error_of([&] { write_text(dir.path(), "x"); }),
            dir.path().string() +
                ": cannot write: it is a directory; -o takes a regular file, a new one, or a "
                "character device or FIFO");
  const auto nested = dir.path() / "no" / "such" / "out.csv";
  EXPECT_EQ(error_of([&] { write_text(nested, "x"); }),
            nested.string() + ": cannot write: the folder " + nested.parent_path().string() +
                " does not exist (footprint creates no folders)");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "no"));
  const auto fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { write_text(fifo, "x"); }),
            fifo.string() + ": cannot write: a FIFO nobody reads");
}

TEST(UserFiles, RegularFilesAreReplacedWholeAndAppendsAppend) {
  const testing::TempDir dir;
  const auto p = dir.path() / "out.txt";
  write_text(p, "first");
  write_text(p, "second");
  EXPECT_EQ(read_text_file(p), "second");
  // A writer that fails leaves the previous file and no temporary behind.
  EXPECT_THROW(write_output_file(p, [](std::ostream&) { throw Error("stop"); }), Error);
  EXPECT_EQ(read_text_file(p), "second");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u);
  append_output_file(p, "+more");
  EXPECT_EQ(read_text_file(p), "second+more");
}

mode_t mode_of(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0);
  return st.st_mode & 07777;
}

TEST(UserFiles, ReadOnlyFilesAreNeitherReplacedNorAppendedToAndModesCarryOver) {
  const testing::TempDir dir;
  const auto p = dir.path() / "kept.csv";
  write_text(p, "precious");
  ASSERT_EQ(::chmod(p.c_str(), 0444), 0);
  // Root may write any file, and the folder allows the rename: the mode bits still say no.
  const std::string refused = p.string() +
                              ": cannot write: the file is read-only (footprint replaces no file "
                              "it may not write; make it writable or write elsewhere)";
  EXPECT_EQ(error_of([&] { write_text(p, "lost"); }), refused);
  EXPECT_EQ(error_of([&] { append_output_file(p, "+lost"); }), refused);
  EXPECT_EQ(error_of([&] { check_writable(p); }), refused);
  EXPECT_EQ(read_text_file(p), "precious");
  EXPECT_EQ(mode_of(p), 0444u);
  // A writable file keeps its permissions when it is replaced.
  const auto q = dir.path() / "private.csv";
  write_text(q, "a");
  ASSERT_EQ(::chmod(q.c_str(), 0600), 0);
  write_text(q, "b");
  EXPECT_EQ(read_text_file(q), "b");
  EXPECT_EQ(mode_of(q), 0600u);
  check_writable(q);
  check_writable(dir.path() / "new.csv");
  check_writable("/dev/null");
}

TEST(UserFiles, AnOutputThatIsAnInputIsRefusedUnderEveryName) {
  const testing::TempDir dir;
  const auto model = dir.path() / "m.onnx";
  write_text(model, "model bytes");
  const auto link = dir.path() / "link.onnx";
  const auto hard = dir.path() / "hard.onnx";
  ASSERT_EQ(::symlink(model.c_str(), link.c_str()), 0);
  ASSERT_EQ(::link(model.c_str(), hard.c_str()), 0);
  const InputFile inputs[] = {{dir.path() / "absent.pb", "an input"}, {model, "the model"}};
  const auto refusal = [&](const std::filesystem::path& out) {
    try {
      refuse_overwriting(out, inputs, "-o");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string tail =
      " this command reads; footprint never writes over its input, write elsewhere";
  EXPECT_EQ(refusal(model), "-o " + model.string() + ": that is the model" + tail);
  EXPECT_EQ(refusal(link),
            "-o " + link.string() + ": that is the model (" + model.string() + ")" + tail);
  EXPECT_EQ(refusal(hard),
            "-o " + hard.string() + ": that is the model (" + model.string() + ")" + tail);
  const auto dotted = dir.path() / "." / "m.onnx";
  EXPECT_NE(refusal(dotted), "");
  EXPECT_EQ(refusal(dir.path() / "other.html"), "");  // absent: nobody's input
  write_text(dir.path() / "other.html", "x");
  EXPECT_EQ(refusal(dir.path() / "other.html"), "");  // present, but not an input
  EXPECT_EQ(read_text_file(model), "model bytes");
}

}  // namespace
}  // namespace footprint
