#include "footprint/report/plan_report.hpp"

#include <fmt/format.h>

#include "footprint/report/analysis_report.hpp"
#include "footprint/report/model_summary_report.hpp"

namespace footprint::report {

nlohmann::json plan_json(const PlanReport& r) {
  const plan::Plan& p = *r.plan;
  const std::optional<PlanSource>& model = r.source;
  nlohmann::json j = {
      {"input", r.input},
      {"algo", r.algo},
      {"algorithm", p.algorithm},
      {"arena_bytes", p.arena_bytes},
      {"lower_bound_bytes", p.lower_bound_bytes},
      {"ratio", p.lower_bound_bytes > 0
                    ? static_cast<double>(p.arena_bytes) / static_cast<double>(p.lower_bound_bytes)
                    : 1.0},
      {"proven_bound_bytes", p.proven_bound_bytes},
      {"proven_ratio", p.proven_bound_bytes > 0 ? static_cast<double>(p.arena_bytes) /
                                                      static_cast<double>(p.proven_bound_bytes)
                                                : 1.0},
      {"buffers", r.buffers},
      {"solve_ms", p.solve_ms},
      {"optimal", p.optimal},
      {"search_nodes", p.search_nodes},
      {"cut_short", p.cut_short},
  };
  if (r.time_limit_s) j["time_limit_s"] = *r.time_limit_s;
  if (r.capacity_bytes) {
    j["capacity_bytes"] = *r.capacity_bytes;
    j["fits"] = p.arena_bytes <= *r.capacity_bytes;
  }
  if (!r.output.empty()) j["output"] = r.output;
  if (model) {
    j["model"] = r.input;
    j["order"] = model->order;
    j["inputs"] = model->inputs_policy;
    j["timeline_lower_bound_bytes"] = model->lower_bound_bytes;
    j["timeline_lower_bound_arena_bytes"] = model->lower_bound_arena_bytes;
    if (model->stored_lower_bound_bytes) {
      j["stored_lower_bound_bytes"] = *model->stored_lower_bound_bytes;
    }
    j["bounded_tensors"] = model->bounded.size();
  }
  return j;
}

std::string plan_text(const PlanReport& r) {
  const plan::Plan& p = *r.plan;
  const std::optional<PlanSource>& model = r.source;
  std::string text =
      fmt::format("plan        {}: {} buffers, {} ({})\n", r.input, r.buffers, r.algo, p.algorithm);
  if (model) {
    text += fmt::format("order       {} (lower bound {} B", model->order, model->lower_bound_bytes);
    if (model->stored_lower_bound_bytes) {
      text += fmt::format("; stored order {} B", *model->stored_lower_bound_bytes);
    }
    text += ")\n";
  }
  text += fmt::format("arena       {} B ({})", p.arena_bytes, human_bytes(p.arena_bytes));
  text += fmt::format("   lower bound {} B", p.lower_bound_bytes);
  if (p.lower_bound_bytes > 0) {
    text += fmt::format("   ratio {:.4f}", static_cast<double>(p.arena_bytes) /
                                               static_cast<double>(p.lower_bound_bytes));
  }
  if (p.proven_bound_bytes > p.lower_bound_bytes) {
    text +=
        fmt::format("   proven bound {} B (ratio {:.4f})", p.proven_bound_bytes,
                    static_cast<double>(p.arena_bytes) / static_cast<double>(p.proven_bound_bytes));
  }
  text += p.optimal ? "   optimal\n" : "\n";
  if (model && !model->bounded.empty()) {
    // The plan is exact for the bounds; a run uses at most what it places.
    text +=
        fmt::format("bounded     {} tensors of data-dependent size are planned at their bounds:\n",
                    model->bounded.size());
    for (const std::string& b : bound_lines(model->bounded)) text += "              " + b + "\n";
  }
  if (r.capacity_bytes) {
    text += fmt::format("capacity    {} B: {}\n", *r.capacity_bytes,
                        p.arena_bytes <= *r.capacity_bytes ? "fits" : "does not fit");
  }
  text += fmt::format("solved in   {:.1f} ms", p.solve_ms);
  if (p.search_nodes > 0) text += fmt::format(" ({} search nodes)", p.search_nodes);
  if (p.cut_short) text += "; cut short by the time limit: the best plan found by then";
  if (!r.output.empty()) text += "\nwritten to  " + r.output;
  return text;
}

}  // namespace footprint::report
