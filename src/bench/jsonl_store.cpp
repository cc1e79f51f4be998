// JSONL records: a context line, then one line per case. Appending keeps a file's history.

#include "footprint/bench/record_io.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/user_files.hpp"
#include "record_json.hpp"

namespace footprint::bench {

std::string to_jsonl(const RunRecords& run) {
  nlohmann::json ctx = to_json(run.context);
  ctx["peak_rss_bytes"] = run.peak_rss_bytes;
  ctx["memo_creations"] = run.memo_creations;
  ctx["memo_evictions"] = run.memo_evictions;
  std::string out = ctx.dump() + "\n";
  for (const Record& r : run.records) {
    nlohmann::json j = to_json(r);
    j["run_id"] = run.context.run_id;
    out += j.dump() + "\n";
  }
  return out;
}

void append_jsonl(const std::filesystem::path& path, const RunRecords& run) {
  append_output_file(path, to_jsonl(run));
}

}  // namespace footprint::bench
