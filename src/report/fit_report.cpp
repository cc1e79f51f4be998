#include "footprint/report/fit_report.hpp"

#include <fmt/format.h>

#include "footprint/report/model_summary_report.hpp"

namespace footprint::report {

nlohmann::json fit_json(const std::string& model, const analysis::DimFit& f) {
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : f.probes) {
    nlohmann::json j = {{"value", p.value}};
    if (p.bytes) {
      j["bytes"] = *p.bytes;
    } else {
      j["refused"] = p.refused;
    }
    probes.push_back(j);
  }
  nlohmann::json j = {{"model", model},
                      {"dim", f.dim},
                      {"figure", analysis::figure_name(f.figure)},
                      {"budget_bytes", f.budget_bytes},
                      {"largest", f.largest ? nlohmann::json(*f.largest) : nlohmann::json()},
                      {"at_limit", f.at_limit},
                      {"probes", probes}};
  if (f.largest) j["bytes_at_largest"] = f.bytes_at_largest;
  if (!f.at_limit) {
    j["above"] = f.above;
    if (f.bytes_above) {
      j["bytes_above"] = *f.bytes_above;
    } else {
      j["refused_above"] = f.refused;
    }
  }
  return j;
}

std::string fit_text(const std::string& model, const analysis::DimFit& f) {
  std::string out;
  auto line = [&]<class... Args>(fmt::format_string<Args...> fmt_, Args&&... args) {
    out += fmt::format(fmt_, std::forward<Args>(args)...);
    out += '\n';
  };
  const char* figure = analysis::figure_name(f.figure);
  line("model        {}", model);
  line("budget       {} B ({}) for the {}", f.budget_bytes, human_bytes(f.budget_bytes), figure);
  if (!f.largest) {
    if (f.bytes_above) {
      line("fit          none: at {}={} the {} is already {} B ({})", f.dim, f.above, figure,
           *f.bytes_above, human_bytes(*f.bytes_above));
    } else {
      line("fit          none: the analysis refuses {}={}: {}", f.dim, f.above, f.refused);
    }
  } else {
    line("fit          {} = {}: {} {} B ({})", f.dim, *f.largest, figure, f.bytes_at_largest,
         human_bytes(f.bytes_at_largest));
    if (f.at_limit) {
      line("             the search's limit: larger values were not tried");
    } else if (f.bytes_above) {
      line("above        {} = {}: {} B ({}), over the budget", f.dim, f.above, *f.bytes_above,
           human_bytes(*f.bytes_above));
    } else {
      line("above        {} = {}: the model cannot take it: {}", f.dim, f.above, f.refused);
    }
  }
  line("probes       {} analyses, each the exact prediction at its value", f.probes.size());
  return out;
}

}  // namespace footprint::report
