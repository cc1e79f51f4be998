// No command writes over a file it reads, nor replaces a read-only file: the model, the trace,
// the buffer list and the tensors of --data-dir come out of every command byte for byte, with a
// usage error (exit 2) naming the flag, and nothing is written.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_runner.hpp"
#include "footprint/runtime/tensor.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> bytes_of(const fs::path& p) {
  return testing::read_file(p);
}

class OwnInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy_file(FOOTPRINT_EXAMPLE_MODEL, model_);
    original_ = bytes_of(model_);
  }

  // `args` is refused as a usage error naming `flag`, and `file` is left as it was.
  void expect_refused(const std::string& args, const std::string& flag, const fs::path& file) {
    const std::vector<std::byte> before = bytes_of(file);
    const CliRun r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("footprint: error: " + flag + " "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("footprint never writes over its input"), std::string::npos) << r.err;
    EXPECT_EQ(bytes_of(file), before) << args;
  }

  testing::TempDir dir_;
  fs::path model_ = dir_.path() / "m.onnx";
  std::vector<std::byte> original_;
};

TEST_F(OwnInputs, ModelCommandsRefuseToWriteOverTheModel) {
  const std::string m = model_.string();
  expect_refused("report " + m + " -o " + m, "-o", model_);
  expect_refused("plan " + m + " -o " + m, "-o", model_);
  expect_refused("bench --repeat 1 " + m + " --out " + m, "--out", model_);
  expect_refused("bench --repeat 1 " + m + " --format gbench --out " + m, "--out", model_);
  expect_refused("bench --repeat 1 " + m + " --db " + m, "--db", model_);
  expect_refused("fold " + m + " -o " + m, "-o", model_);
  // Another name for the same file: a symbolic link, and a path through "..".
  const fs::path link = dir_.path() / "link.html";
  fs::create_symlink(model_, link);
  expect_refused("report " + m + " -o " + link.string(), "-o", model_);
  const fs::path sub = dir_.path() / "sub";
  fs::create_directory(sub);
  expect_refused("report " + m + " -o " + (sub / ".." / "m.onnx").string(), "-o", model_);
  EXPECT_EQ(bytes_of(model_), original_);
}

TEST_F(OwnInputs, TraceAndBufferListAreKeptToo) {
  const fs::path trace = dir_.path() / "t.json";
  fs::copy_file(std::string(FOOTPRINT_SOURCE_DIR) + "/examples/traces/seed_mul_list.json", trace);
  expect_refused("report " + trace.string() + " -o " + trace.string(), "-o", trace);
  expect_refused("plan " + trace.string() + " -o " + trace.string(), "-o", trace);
  const fs::path csv = dir_.path() / "b.csv";
  ASSERT_EQ(run("plan " + trace.string() + " -o " + csv.string()).exit_code, 0);
  expect_refused("plan " + csv.string() + " -o " + csv.string(), "-o", csv);
}

TEST_F(OwnInputs, RunDoesNotWriteOutputsOverItsDataDir) {
  // A data dir with an input and a reference output, as the ONNX backend tests lay them out.
  const fs::path data = dir_.path() / "data";
  fs::create_directory(data);
  runtime::Tensor x("x", DType::float32, {1, 1, 8, 8});
  for (size_t i = 0; i < x.bytes() / sizeof(float); ++i)
    reinterpret_cast<float*>(x.data())[i] = static_cast<float>(i % 7) / 7.0f;
  runtime::write_tensor_file(data / "input_0.pb", x);
  ASSERT_EQ(run("run --repeat 1 --data-dir " + data.string() + " " + model_.string() + " -o " +
                dir_.path().string() + "/ref")
                .exit_code,
            0);
  fs::copy_file(dir_.path() / "ref" / "output_0.pb", data / "output_0.pb");
  const std::string args = "run --repeat 1 --data-dir " + data.string() + " " + model_.string();
  expect_refused(args + " -o " + data.string(), "-o", data / "output_0.pb");
  // --input files count as well, whatever they are called.
  const fs::path other = dir_.path() / "other";
  fs::create_directory(other);
  fs::copy_file(data / "input_0.pb", other / "output_0.pb");
  expect_refused("run --repeat 1 " + model_.string() +
                     " --input x=" + (other / "output_0.pb").string() + " -o " + other.string(),
                 "-o", other / "output_0.pb");
  // A folder of its own is fine.
  EXPECT_EQ(run(args + " -o " + (dir_.path() / "out").string()).exit_code, 0);
}

TEST_F(OwnInputs, ReadOnlyOutputsAreRefusedNotReplaced) {
  const std::string m = model_.string();
  const fs::path kept = dir_.path() / "kept.out";
  {
    const CliRun r = run("plan " + m + " -o " + kept.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  ASSERT_EQ(::chmod(kept.c_str(), 0444), 0);
  const std::vector<std::byte> before = bytes_of(kept);
  for (const std::string& args :
       {"report " + m + " -o " + kept.string(), "plan " + m + " -o " + kept.string(),
        "bench --repeat 1 " + m + " --format gbench --out " + kept.string(),
        "bench --repeat 1 " + m + " --out " + kept.string(),
        "fold " + m + " -o " + kept.string()}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(kept.string() + ": cannot write: the file is read-only"),
              std::string::npos)
        << args << "\n"
        << r.err;
    EXPECT_EQ(bytes_of(kept), before) << args;
    struct stat st {};
    ASSERT_EQ(::stat(kept.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0444u) << args << ": replaced by a rename";
  }
}

}  // namespace
}  // namespace footprint
