#pragma once
// `footprint report`: one self-contained HTML file (inline SVG, a canvas and a little
// JavaScript; nothing from the network) with the memory timeline stacked by category, the lower
// bound and the planned arena, the arena layout, what is alive at the peak and why, a per-op
// summary, and the stored and memory-aware orders side by side.
//
//   HtmlReport r{.title = "densenet121", .program = &p, .timeline = &t, .plan = &plan};
//   std::string html = render_html(r);
//
// Big graphs stay light: the timeline is drawn from at most a few thousand points (each
// series' peak kept exactly, timeline_series.hpp), the layout is drawn on a canvas, tables and
// names are capped (HtmlLimits), and the data sits in the page once, as compact JSON.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "footprint/analysis/memory_program.hpp"
#include "footprint/analysis/timeline.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/plan/plan.hpp"

namespace footprint::report {

// The same graph in its stored order and in the memory-aware order (analysis::memory_order).
// Steps are identified by node id, so positions can be compared whatever the names.
struct OrderComparison {
  const analysis::MemoryProgram* stored_program = nullptr;
  const analysis::Timeline* stored = nullptr;
  std::vector<int32_t> stored_nodes;  // node id at each step of the stored order
  const analysis::MemoryProgram* memory_program = nullptr;
  const analysis::Timeline* memory = nullptr;
  std::vector<int32_t> memory_nodes;
  std::string method;  // "exact", "beam" or "stored" (the search found nothing better)
  bool exact = false;
};

struct HtmlReport {
  std::string title;           // the model or trace path
  std::string kind = "model";  // "model" or "trace"
  std::string order = "stored";
  std::string inputs_policy = "caller";
  DimBindings dims;
  std::vector<std::string> warnings;
  const analysis::MemoryProgram* program = nullptr;
  const analysis::Timeline* timeline = nullptr;
  // The plan of analysis::arena_buffers(*timeline, *program): offsets[i] places
  // timeline->buffers[i].
  const plan::Plan* plan = nullptr;
  std::optional<OrderComparison> orders;  // models only; absent for traces
  // With --run: bytes measured after each step (one per timeline step), drawn over the stack;
  // empty when the model was not run.
  std::vector<uint64_t> measured;
  std::string measured_label;  // what the measured curve counts
};

struct HtmlLimits {
  size_t max_buckets = 2000;           // timeline: at most ~2 points per bucket are drawn
  size_t max_layout_buffers = 150000;  // the largest buffers are drawn, the rest summed up
  size_t max_alive_rows = 1000;
  size_t max_moved_rows = 200;
  size_t name_budget_bytes = 3u << 20;  // step and tensor names together; longer ones are cut
};

// The JSON the page draws from (fields in docs: see the template's comments). Throws nothing for
// a consistent timeline and plan; a plan whose offsets do not match the buffers is a usage error.
nlohmann::json report_data(const HtmlReport& r, const HtmlLimits& limits = {});

// The whole page: render_page(report_data(r, limits)).
std::string render_html(const HtmlReport& r, const HtmlLimits& limits = {});
// The page around data from report_data() (its summary.title names the page).
std::string render_page(const nlohmann::json& data);

}  // namespace footprint::report
