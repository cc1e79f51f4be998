// MiniMalloc's CSV: what it accepts, the one-line errors naming file, line and column, and the
// plan written back.
#include "footprint/plan/buffer_csv.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "footprint/core/error.hpp"
#include "test_support.hpp"

namespace footprint::plan {
namespace {

std::string error_of(std::string_view text) {
  try {
    (void)parse_buffers_csv(text, "in.csv");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(BufferCsv, ReadsMiniMallocsFormat) {
  const auto b = parse_buffers_csv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\n", "in.csv");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[1].id, "b2");
  EXPECT_EQ(b[1].lower, 3);
  EXPECT_EQ(b[1].upper, 9);
  EXPECT_EQ(b[1].size, 4);
  EXPECT_EQ(b[1].alignment, 1);
  EXPECT_FALSE(b[1].fixed_offset);
}

TEST(BufferCsv, ToleratesLayoutAndReadsOptionalColumns) {
  const auto b = parse_buffers_csv(
      "\xEF\xBB\xBFsize, upper ,lower,id,alignment,fixed_offset,offset\r\n"
      "\r\n"
      "64,9,0,x,64,128,7\r\n"
      "8,2,1,y,,,\r\n",
      "in.csv");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].id, "x");
  EXPECT_EQ(b[0].size, 64);
  EXPECT_EQ(b[0].alignment, 64);
  EXPECT_EQ(b[0].fixed_offset, 128);
  EXPECT_EQ(b[1].alignment, 1);
  EXPECT_FALSE(b[1].fixed_offset);
  EXPECT_TRUE(parse_buffers_csv("id,lower,upper,size\n", "in.csv").empty());
}

TEST(BufferCsv, ErrorsNameFileLineAndColumn) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"", "in.csv:1: empty file"},
      {"id,lower,size\n", "in.csv:1: header has no 'upper' column"},
      {"id,lower,upper,size,colour\n", "in.csv:1: column 5 (colour): unknown column"},
      {"id,lower,upper,size,size\n", "in.csv:1: column 5 (size): column appears twice"},
      {"id,lower,upper,size\na,0,1,8\nb,0,x,8\n",
       "in.csv:3: column 3 (upper): expected an integer, got 'x'"},
      {"id,lower,upper,size\na,0,1,-8\n",
       "in.csv:2: column 4 (size): expected an integer in [0, 2^60], got -8"},
      {"id,lower,upper,size\na,0,1,99999999999999999999\n", "out of range"},
      {"id,lower,upper,size\na,5,5,8\n", "in.csv:2: column 3 (upper): expected upper > lower"},
      {"id,lower,upper,size\na,0,1\n", "in.csv:2: expected 4 fields, got 3"},
      {"id,lower,upper,size\na,0,1,8\na,1,2,8\n",
       "in.csv:3: id 'a' appears again (first on line 2)"},
      {"id,lower,upper,size\n,0,1,8\n", "in.csv:2: column 1 (id): empty id"},
      {"id,lower,upper,size,alignment\na,0,1,8,0\n",
       "column 5 (alignment): expected an integer in [1, 2^60], got 0"},
      {"id,lower,upper,size,alignment,fixed_offset\na,0,1,8,16,8\n",
       "in.csv:2: column 6 (fixed_offset): 8 is not a multiple of the alignment 16"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.text);
    EXPECT_NE(e.find(c.expect), std::string::npos) << "text: " << c.text << "\nerror: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;  // one line
  }
}

TEST(BufferCsv, IdsFromTheFileAreEscapedInErrors) {
  const std::string e = error_of("id,lower,upper,size\n\x1b[31m,0,1,8\n\x1b[31m,0,1,8\n");
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
}

TEST(BufferCsv, WritesPlansThatReadBack) {
  footprint::testing::TempDir dir;
  const auto buffers = parse_buffers_csv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\n", "in.csv");
  const std::vector<int64_t> offsets = {0, 4};
  EXPECT_EQ(format_plan_csv(buffers, offsets),
            "id,lower,upper,size,offset\nb1,0,3,4,0\nb2,3,9,4,4\n");
  const auto path = dir.path() / "plan.csv";
  write_plan_csv(path, buffers, offsets);
  const auto again = read_buffers_csv(path);  // the offset column is ignored on the way in
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[1].id, "b2");
  EXPECT_THROW(read_buffers_csv(dir.path() / "missing.csv"), Error);
  EXPECT_THROW(write_plan_csv(dir.path() / "no" / "such" / "dir.csv", buffers, offsets), Error);
}

TEST(BufferCsv, ReadsOnlyRegularFilesAndWritesThroughDevices) {
  footprint::testing::TempDir dir;
  const auto fifo = dir.path() / "buffers.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A blocking open of a FIFO with no writer would never return.
  try {
    (void)read_buffers_csv(fifo);
    ADD_FAILURE() << "a FIFO was read as a buffer list";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), fifo.string() + ": a FIFO, not a regular file");
  }
  EXPECT_THROW(read_buffers_csv("/dev/zero"), Error);
  const auto buffers = parse_buffers_csv("id,lower,upper,size\nb1,0,3,4\n", "in.csv");
  write_plan_csv("/dev/null", buffers, std::vector<int64_t>{0});
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "write_plan_csv replaced /dev/null";
}

}  // namespace
}  // namespace footprint::plan
