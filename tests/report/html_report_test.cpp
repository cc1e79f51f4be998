// The HTML report as a file: self-contained, its embedded data faithful to the timeline and the
// plan, safe against names that look like markup, and small on big graphs.
#include "footprint/report/html_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/analysis/memory_order.hpp"
#include "footprint/analysis/timeline_buffers.hpp"
#include "footprint/analysis/trace_format.hpp"
#include "footprint/graph/topo_order.hpp"
#include "footprint/plan/planner.hpp"
#include "graph/built_graph.hpp"
#include "graph/infer_builder.hpp"

namespace footprint::report {
namespace {

using analysis::Category;
using nlohmann::json;

const std::string kTraces = std::string(FOOTPRINT_SOURCE_DIR) + "/examples/traces/";

// A step reading `inputs` and writing `outputs`, nothing else set.
analysis::ProgramStep step(std::string name, std::string op, std::vector<int> inputs,
                           std::vector<int> outputs) {
  analysis::ProgramStep s;
  s.name = std::move(name);
  s.op = std::move(op);
  s.inputs = std::move(inputs);
  s.outputs = std::move(outputs);
  return s;
}

// A program with its timeline and plan, kept together so the report's pointers stay valid.
struct Planned {
  analysis::MemoryProgram program;
  analysis::Timeline timeline;
  plan::Plan plan;

  explicit Planned(analysis::MemoryProgram p) : program(std::move(p)) {
    timeline = analysis::simulate(program);
    plan = plan::plan_buffers(analysis::arena_buffers(timeline, program), "best-fit");
  }
  HtmlReport report(std::string title = "test") const {
    HtmlReport r;
    r.title = std::move(title);
    r.kind = "trace";
    r.program = &program;
    r.timeline = &timeline;
    r.plan = &plan;
    return r;
  }
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The JSON between the data script's tags, parsed back.
json embedded_data(const std::string& page) {
  const std::string open = R"(<script type="application/json" id="footprint-data">)";
  const size_t begin = page.find(open);
  EXPECT_NE(begin, std::string::npos);
  const size_t start = begin + open.size();
  return json::parse(page.substr(start, page.find("</script>", start) - start));
}

TEST(HtmlReport, PageIsSelfContained) {
  const Planned p(analysis::read_trace_file(kTraces + "seed_mul_list.json").program);
  const std::string page = render_html(p.report());
  for (const char* remote : {"<link", " src=", "https://", "@import", "url(", "{{TITLE}}",
                             "{{DATA}}", "fetch(", "XMLHttpRequest"}) {
    EXPECT_EQ(page.find(remote), std::string::npos) << remote;
  }
  // http:// appears once, as the SVG namespace name (an identifier, never fetched).
  EXPECT_EQ(count(page, "http://"), 1u);
  EXPECT_EQ(count(page, "</script>"), 2u);
  EXPECT_NE(page.find("data-render-ms"), std::string::npos);
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("<canvas"), std::string::npos);
}

TEST(HtmlReport, EmbeddedDataFollowsTheTimelineAndPlan) {
  const Planned p(analysis::read_trace_file(kTraces + "seed_mul_list.json").program);
  const HtmlReport r = p.report("seed");
  const json j = embedded_data(render_html(r));
  EXPECT_EQ(j, report_data(r));
  EXPECT_EQ(j["summary"]["totalPeak"], 96);
  EXPECT_EQ(j["summary"]["peakStep"], 0);
  EXPECT_EQ(j["summary"]["arena"], p.plan.arena_bytes);
  EXPECT_EQ(j["timeline"]["n"], 4);
  EXPECT_EQ(j["timeline"]["x"], json({0, 1, 2, 3}));
  EXPECT_EQ(j["timeline"]["in"][0], 80);
  EXPECT_EQ(j["timeline"]["act"][0], 16);
  EXPECT_EQ(j["timeline"]["out"][3], 48);
  ASSERT_EQ(j["layout"]["lo"].size(), p.timeline.buffers.size());
  EXPECT_EQ(j["layout"]["t"][0], "t3");
  EXPECT_EQ(j["layout"]["b"][0], 16);
  EXPECT_EQ(j["steps"]["name"][0], "t3 = t2 * z");
  EXPECT_EQ(j["steps"]["ops"][j["steps"]["op"][0].get<size_t>()], "mul");
  // The why column, as the timeline says it.
  ASSERT_EQ(j["alive"]["rows"].size(), p.timeline.alive_at_peak.size());
  EXPECT_EQ(j["alive"]["rows"][0][5], p.timeline.alive_at_peak[0].why);
  EXPECT_EQ(j["ops"][0][0], "mul");
  EXPECT_EQ(j["ops"][0][1], 4) << "four mul nodes";
  EXPECT_TRUE(j["orders"].is_null()) << "a trace has one order";
  EXPECT_EQ(j["phases"], json::array()) << "the seed trace names no phase";
}

// A recorded training step: consecutive steps of one phase make one run, and a phase that
// comes back (a second forward) is a run of its own.
TEST(HtmlReport, PhasesAreRunsOfSteps) {
  analysis::MemoryProgram m;
  for (const char* name : {"x", "a", "b", "c", "d"}) {
    analysis::ProgramTensor t;
    t.name = name;
    t.bytes = 64;
    m.tensors.push_back(t);
  }
  m.tensors[0].category = Category::inputs;
  const char* phases[] = {"forward", "forward", "backward", "forward"};
  for (int i = 0; i < 4; ++i) {
    m.steps.push_back(step("s" + std::to_string(i), "f", {i}, {i + 1}));
    m.steps.back().phase = phases[i];
  }
  const Planned p(std::move(m));
  const json j = report_data(p.report());
  EXPECT_EQ(j["phases"], json::parse(R"([{"name": "forward", "from": 0, "to": 1},
                                         {"name": "backward", "from": 2, "to": 2},
                                         {"name": "forward", "from": 3, "to": 3}])"));
  EXPECT_NE(render_html(p.report()).find("D.phases"), std::string::npos);
}

TEST(HtmlReport, NamesThatLookLikeMarkupStayText) {
  analysis::MemoryProgram prog;
  const std::string evil = "</script><script>alert(1)</script>";
  prog.tensors = {{"x", 64, Category::inputs},
                  {evil, 128, Category::activations},
                  {"y", 64, Category::outputs}};
  prog.steps = {step("<b>f</b>", "f", {0}, {1}), step("g", "g", {1}, {2})};
  const Planned p(prog);
  const std::string page = render_html(p.report("<i>model</i> & co"));
  EXPECT_EQ(count(page, "</script>"), 2u);
  EXPECT_NE(page.find("<title>footprint: &lt;i&gt;model&lt;/i&gt; &amp; co</title>"),
            std::string::npos);
  const json j = embedded_data(page);
  EXPECT_EQ(j["layout"]["t"][0], evil);
  EXPECT_EQ(j["steps"]["name"][0], "<b>f</b>");
  EXPECT_EQ(j["summary"]["title"], "<i>model</i> & co");
}

// 100 000 steps, each writing a 1 KiB-ish activation read by the next, with 60-byte names: a
// timeline built directly (the simulation of this size is the analysis layer's business).
struct BigReport {
  analysis::MemoryProgram program;
  analysis::Timeline timeline;
  plan::Plan plan;
};

BigReport big_report(size_t n) {
  BigReport b;
  const std::string pad(52, 'x');
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bytes = 1024 + (i * 37) % 4096;
    b.program.tensors.push_back({pad + std::to_string(i), bytes, Category::activations});
    b.program.steps.push_back(step("step/" + pad + std::to_string(i), i % 3 ? "Conv" : "Relu",
                                   {static_cast<int>(i ? i - 1 : 0)}, {static_cast<int>(i)}));
    b.timeline.buffers.push_back({static_cast<int>(i), static_cast<int>(i),
                                  static_cast<int>(std::min(i + 1, n - 1)), bytes,
                                  Category::activations});
    b.plan.offsets.push_back(static_cast<int64_t>((i % 2) * 8192));
  }
  for (size_t i = 0; i < n; ++i) {
    analysis::StepMemory s;
    s.index = static_cast<int>(i);
    s.node = b.program.steps[i].name;
    s.op = b.program.steps[i].op;
    s.alloc_bytes = b.timeline.buffers[i].bytes;
    s.live_bytes = s.alloc_bytes + (i > 0 ? b.timeline.buffers[i - 1].bytes : 0);
    s.total_bytes = s.live_bytes;
    if (s.total_bytes > b.timeline.total_peak_bytes) {
      b.timeline.total_peak_bytes = s.total_bytes;
      b.timeline.peak_step = s.index;
    }
    b.timeline.steps.push_back(s);
  }
  b.timeline.lower_bound_bytes = b.timeline.total_peak_bytes;
  b.plan.arena_bytes = 16384;
  b.plan.algorithm = "test";
  return b;
}

TEST(HtmlReport, BigGraphsAreDownsampledAndStayUnderTenMegabytes) {
  const size_t n = 100000;
  const BigReport b = big_report(n);
  HtmlReport r;
  r.title = "big";
  r.program = &b.program;
  r.timeline = &b.timeline;
  r.plan = &b.plan;
  const HtmlLimits limits;
  const json j = report_data(r, limits);
  const std::string page = render_page(j);
  EXPECT_LT(page.size(), 10u << 20) << "the issue's limit";
  const json& x = j["timeline"]["x"];
  EXPECT_LE(x.size(), 2 * limits.max_buckets + 2);
  EXPECT_NE(std::find(x.begin(), x.end(), json(b.timeline.peak_step)), x.end())
      << "the exact peak is drawn";
  EXPECT_EQ(j["layout"]["lo"].size(), n) << "under the layout limit every buffer is drawn";
  size_t names = 0;
  for (const auto& t : j["layout"]["t"]) names += t.get<std::string>().size();
  for (const auto& t : j["steps"]["name"]) names += t.get<std::string>().size();
  EXPECT_LE(names, limits.name_budget_bytes + 2 * n * 3) << "cut names, ellipsis included";
  // A cut name keeps its end, where the numbers that tell names apart are.
  EXPECT_EQ(j["layout"]["t"][n - 1].get<std::string>().substr(
                j["layout"]["t"][n - 1].get<std::string>().size() - 5),
            std::to_string(n - 1));
}

TEST(HtmlReport, LimitsKeepTheLargestBuffersAndRows) {
  const BigReport b = big_report(100);
  HtmlReport r;
  r.title = "limits";
  r.program = &b.program;
  r.timeline = &b.timeline;
  r.plan = &b.plan;
  HtmlLimits limits;
  limits.max_layout_buffers = 10;
  const json j = report_data(r, limits);
  ASSERT_EQ(j["layout"]["lo"].size(), 10u);
  EXPECT_EQ(j["layout"]["omitted"], 90);
  std::vector<uint64_t> sizes;
  for (const auto& bl : b.timeline.buffers) sizes.push_back(bl.bytes);
  std::sort(sizes.rbegin(), sizes.rend());
  for (const auto& bytes : j["layout"]["b"]) EXPECT_GE(bytes.get<uint64_t>(), sizes[9]);
  uint64_t drawn = 0, all = 0;
  for (const auto& bytes : j["layout"]["b"]) drawn += bytes.get<uint64_t>();
  for (const uint64_t s : sizes) all += s;
  EXPECT_EQ(j["layout"]["omittedBytes"].get<uint64_t>(), all - drawn);
}

TEST(HtmlReport, APlanForOtherBuffersIsRejected) {
  const Planned p(analysis::read_trace_file(kTraces + "seed_mul_list.json").program);
  plan::Plan wrong = p.plan;
  wrong.offsets.push_back(0);
  HtmlReport r = p.report();
  r.plan = &wrong;
  EXPECT_THROW(report_data(r), UsageError);
}

// x[1,1,8,8] widens twice and pools each branch (tests/analysis/memory_order_test.cpp): stored
// order 1032 B, memory-aware order 528 B, with a2 and p1 swapped.
TEST(HtmlReport, OrderComparisonShowsWhatMoved) {
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
  const testing::BuiltGraph m = testing::build_graph(g, /*infer=*/true);

  const analysis::GraphProgram stored = analysis::build_program(m.graph);
  const analysis::MemoryOrder mo = analysis::memory_order(m.graph);
  analysis::GraphProgramOptions options;
  options.order = mo.order;
  const analysis::GraphProgram memory = analysis::build_program(m.graph, options);
  const Planned ps(stored.program), pm(memory.program);

  HtmlReport r = ps.report("two branches");
  r.kind = "model";
  OrderComparison c;
  c.stored_program = &ps.program;
  c.stored = &ps.timeline;
  c.stored_nodes = stored.order;
  c.memory_program = &pm.program;
  c.memory = &pm.timeline;
  c.memory_nodes = memory.order;
  c.method = mo.method;
  c.exact = mo.exact;
  r.orders = c;
  const json o = report_data(r)["orders"];
  EXPECT_TRUE(o["differ"]);
  EXPECT_EQ(o["storedLowerBound"], 1032);
  EXPECT_EQ(o["memoryLowerBound"], 528);
  EXPECT_EQ(o["method"], "exact");
  EXPECT_EQ(o["movedCount"], 2);
  ASSERT_EQ(o["moved"].size(), 2u);
  // a2 runs at step 2 instead of 1, p1 at 1 instead of 2.
  const json a2 = o["moved"][0][0] == "a2" ? o["moved"][0] : o["moved"][1];
  EXPECT_EQ(a2, json({"a2", 1, 2}));
  EXPECT_EQ(o["x"].size(), 5u);
  EXPECT_EQ(o["stored"][1], 1024) << "a1 and a2 live together in the stored order";
}

}  // namespace
}  // namespace footprint::report
