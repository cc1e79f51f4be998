#pragma once
// Records and contexts as JSON objects: the one mapping that the JSONL store, the Google
// Benchmark writer and the readers share.
#include <nlohmann/json.hpp>

#include "footprint/bench/record.hpp"

namespace footprint::bench {

nlohmann::json to_json(const ParamRepr& p);
nlohmann::json to_json(const Summary& s, const std::vector<double>& samples);
nlohmann::json to_json(const Record& r);
nlohmann::json to_json(const RunContext& c);

ParamRepr param_from_json(const nlohmann::json& j);
Record record_from_json(const nlohmann::json& j);
RunContext context_from_json(const nlohmann::json& j);

}  // namespace footprint::bench
