#pragma once
// `footprint info` output: the JSON contract of DESIGN.md and a human-readable table.
#include <nlohmann/json.hpp>
#include <string>

#include "footprint/analysis/model_summary.hpp"

namespace footprint::report {

nlohmann::json to_json(const analysis::ModelSummary& s);
std::string to_text(const analysis::ModelSummary& s);

// "1.5 MiB", "312 B": a byte count for people.
std::string human_bytes(uint64_t bytes);

}  // namespace footprint::report
