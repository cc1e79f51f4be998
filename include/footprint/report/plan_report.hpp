#pragma once
// `footprint plan` output: a plan of a model's, a trace's or a buffer list's arena, as DESIGN.md's
// JSON contract and as a readable summary.
//
//   report::PlanReport r;
//   r.input = "model.onnx";
//   r.plan = &p;  // plan::plan_buffers(buffers, algo, options)
//   r.buffers = buffers.size();
//   std::printf("%s\n", report::plan_text(r).c_str());  // or plan_json(r).dump(2)
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "footprint/analysis/graph_program.hpp"
#include "footprint/plan/plan.hpp"

namespace footprint::report {

// Where a model's or a trace's buffers came from; absent for a buffer list.
struct PlanSource {
  std::string order;  // "stored", "memory" or "trace"
  std::string inputs_policy = "caller";
  uint64_t lower_bound_bytes = 0;
  uint64_t lower_bound_arena_bytes = 0;
  std::optional<uint64_t> stored_lower_bound_bytes;  // beside the chosen order's, when not stored
  std::vector<analysis::BoundedTensor> bounded;  // data-dependent sizes, planned at their bounds
};

struct PlanReport {
  std::string input;
  std::string algo = "auto";  // as asked; plan->algorithm says which one placed the buffers
  const plan::Plan* plan = nullptr;
  size_t buffers = 0;
  std::optional<double> time_limit_s;
  std::optional<int64_t> capacity_bytes;
  std::string output;  // the CSV written, if any
  std::optional<PlanSource> source;
};

nlohmann::json plan_json(const PlanReport& r);
std::string plan_text(const PlanReport& r);

}  // namespace footprint::report
