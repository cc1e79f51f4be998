#pragma once
// `footprint fit` output: the largest value of a dim whose predicted figure fits the budget, as
// JSON and as a readable summary.
//
//   const analysis::DimFit f = analysis::fit_dim(timeline_at, "seq", figure, budget);
//   std::printf("%s", report::fit_text("model.onnx", f).c_str());  // or fit_json(...).dump(2)
#include <nlohmann/json.hpp>
#include <string>

#include "footprint/analysis/dim_fit.hpp"

namespace footprint::report {

nlohmann::json fit_json(const std::string& model, const analysis::DimFit& f);
std::string fit_text(const std::string& model, const analysis::DimFit& f);

}  // namespace footprint::report
