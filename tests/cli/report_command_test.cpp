// `footprint report` as a user runs it: the page it writes, its JSON summary, the order
// comparison for a model that has a better order, and its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_runner.hpp"
#include "graph/infer_builder.hpp"
#include "onnx/wire_builder.hpp"
#include "test_support.hpp"

namespace footprint {
namespace {

const std::string kSeed = std::string(FOOTPRINT_SOURCE_DIR) + "/examples/traces/seed_mul_list.json";

std::string read_text(const std::filesystem::path& p) {
  const auto bytes = testing::read_file(p);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

TEST(ReportCommand, SeedTraceWritesOnePage) {
  testing::TempDir dir;
  const auto out = dir.path() / "seed.html";
  const CliRun r = run("report --json " + kSeed + " -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["output"], out.string());
  EXPECT_EQ(j["kind"], "trace");
  EXPECT_EQ(j["inputs"], "donated") << "the trace's own policy";
  EXPECT_EQ(j["steps"], 4);
  EXPECT_EQ(j["total_peak_bytes"], 96);
  EXPECT_EQ(j["buffers"], 1) << "t3; the gradients are outputs";
  EXPECT_FALSE(j.contains("orders"));
  const std::string page = read_text(out);
  EXPECT_EQ(j["html_bytes"], page.size());
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(page.find("t3 = t2 * z"), std::string::npos);
  // Nothing else is left beside it (the write goes through a temporary file).
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(ReportCommand, TextSummaryNamesTheFile) {
  testing::TempDir dir;
  const auto out = dir.path() / "r.html";
  const CliRun r = run("report " + kSeed + " -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("report      " + out.string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 steps"), std::string::npos) << r.out;
}

TEST(ReportCommand, ModelReportComparesOrders) {
  // Two branches that each widen then pool: pooling each branch before widening the next
  // halves the lower bound (tests/analysis/memory_order_test.cpp).
  testing::Wire g;
  const auto concat = [](std::vector<std::string_view> in, std::string_view out) {
    return testing::node("Concat", std::move(in), {out}, out).msg(5, testing::attr("axis", 1));
  };
  g.msg(11, testing::float_value_info("x", {1, 1, 8, 8}));
  g.msg(1, concat({"x", "x"}, "a1"));
  g.msg(1, concat({"x", "x"}, "a2"));
  g.msg(1, testing::node("GlobalAveragePool", {"a1"}, {"p1"}, "p1"));
  g.msg(1, testing::node("GlobalAveragePool", {"a2"}, {"p2"}, "p2"));
  g.msg(1, concat({"p1", "p2"}, "y"));
  g.msg(12, testing::output("y"));
  testing::TempDir dir;
  const auto model = dir.path() / "two_branches.onnx";
  testing::write_file(model, testing::model(g).bytes());
  const auto out = dir.path() / "two.html";

  const CliRun stored = run("report --json " + model.string() + " -o " + out.string());
  ASSERT_EQ(stored.exit_code, 0) << stored.err;
  const auto j = nlohmann::json::parse(stored.out);
  EXPECT_EQ(j["kind"], "model");
  EXPECT_EQ(j["order"], "stored");
  EXPECT_TRUE(j["orders"]["differ"]);
  EXPECT_EQ(j["orders"]["stored_lower_bound_bytes"], 1032);
  EXPECT_EQ(j["orders"]["memory_lower_bound_bytes"], 528);
  EXPECT_EQ(j["lower_bound_bytes"], 1032) << "the page shows the stored order";

  const CliRun memory =
      run("report --json --order memory " + model.string() + " -o " + out.string());
  ASSERT_EQ(memory.exit_code, 0) << memory.err;
  EXPECT_EQ(nlohmann::json::parse(memory.out)["lower_bound_bytes"], 528);
}

TEST(ReportCommand, ExampleModelWithDims) {
  testing::TempDir dir;
  const auto out = dir.path() / "tiny.html";
  const CliRun r = run(std::string("report --json --dim N=4 ") + FOOTPRINT_EXAMPLE_MODEL + " -o " +
                       out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["steps"], 7) << "six nodes, the Relu fused into the Conv, two layout changes";
  EXPECT_GE(j["arena_bytes"], j["lower_bound_arena_bytes"]);
  EXPECT_NE(read_text(out).find("\"N\":4"), std::string::npos);
}

// The page's data: the JSON inside <script id="footprint-data">.
nlohmann::json page_data(const std::string& html) {
  const std::string open = "id=\"footprint-data\">";
  const size_t begin = html.find(open);
  const size_t end = html.find("</script>", begin);
  if (begin == std::string::npos || end == std::string::npos) return {};
  return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

TEST(ReportCommand, RunDrawsWhatTheRunHeldAfterEachStep) {
  testing::TempDir dir;
  const auto out = dir.path() / "run.html";
  const CliRun r =
      run(std::string("report --run --dim N=4 ") + FOOTPRINT_EXAMPLE_MODEL + " -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (r.err.find("does not count the heap") != std::string::npos) {
    GTEST_SKIP() << "this build has no counting allocator (sanitizers replace malloc)";
  }
  const auto data = page_data(read_text(out));
  ASSERT_TRUE(data.contains("timeline")) << data.dump().substr(0, 300);
  const auto& t = data["timeline"];
  ASSERT_TRUE(t.contains("m")) << "no measured curve";
  ASSERT_EQ(t["m"].size(), t["x"].size());
  // The run holds at least its arena and the weights it reads (in place or copied) at every step.
  for (const auto& v : t["m"])
    EXPECT_GE(v.get<uint64_t>(), data["summary"]["arena"].get<uint64_t>());
  const auto plain = dir.path() / "plain.html";
  ASSERT_EQ(
      run(std::string("report --dim N=4 ") + FOOTPRINT_EXAMPLE_MODEL + " -o " + plain.string())
          .exit_code,
      0);
  EXPECT_FALSE(page_data(read_text(plain))["timeline"].contains("m"));
}

TEST(ReportCommand, UsageErrorsExitTwo) {
  testing::TempDir dir;
  const std::string out = " -o " + (dir.path() / "x.html").string();
  for (const std::string& args :
       {"report " + kSeed,  // no -o
        "report --dim N=2 " + kSeed + out, "report --order memory " + kSeed + out,
        "report --algo nope " + kSeed + out, "report --run " + kSeed + out}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err.rfind("footprint: error: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "x.html"));
}

TEST(ReportCommand, BadInputsExitOne) {
  testing::TempDir dir;
  const auto bad_model = dir.path() / "bad.onnx";
  testing::write_file(bad_model, std::as_bytes(std::span(std::string_view("not a model"))));
  const auto bad_trace = dir.path() / "bad.json";
  testing::write_file(bad_trace, std::as_bytes(std::span(std::string_view("{\"format\": 1}"))));
  const std::string out = " -o " + (dir.path() / "x.html").string();
  for (const std::string& args :
       {"report " + bad_model.string() + out, "report " + bad_trace.string() + out,
        "report " + (dir.path() / "missing.onnx").string() + out,
        "report " + kSeed + " -o " + (dir.path() / "no/such/dir/x.html").string()}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_EQ(r.err.rfind("footprint: error: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "x.html"));
}

}  // namespace
}  // namespace footprint
