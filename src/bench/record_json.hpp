#pragma once
// Records and contexts as JSON objects: the one mapping that the JSONL store, the Google
// Benchmark writer and the readers share.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "footprint/bench/record.hpp"

namespace footprint::bench {

nlohmann::json to_json(const ParamRepr& p);
nlohmann::json to_json(const Summary& s, const std::vector<double>& samples);
nlohmann::json to_json(const Record& r);
nlohmann::json to_json(const RunContext& c);

// A count or byte figure of a record file: nullopt when `j` has no `key`. Anything but a whole
// number in range is an error: read as 0, or wrapped, it would be a figure nobody measured.
std::optional<uint64_t> read_count(const nlohmann::json& j, const char* key);
std::optional<int64_t> read_signed_count(const nlohmann::json& j, const char* key);
// A duration: a finite number >= 0, or an error naming `key`.
double read_duration(const nlohmann::json& v, const char* key);

ParamRepr param_from_json(const nlohmann::json& j);
Record record_from_json(const nlohmann::json& j);
RunContext context_from_json(const nlohmann::json& j);

}  // namespace footprint::bench
