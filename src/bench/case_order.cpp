// The run order: cases sharing memos are adjacent, so a memo's lifetime covers exactly its users.
#include <algorithm>
#include <map>

#include "footprint/bench/runner.hpp"

namespace footprint::bench {
namespace {

std::string case_name(const Benchmark& b, const Params& p) {
  if (p.all().empty()) return b.name();
  std::string args;
  for (const Param& v : p.all()) {
    args += (args.empty() ? "" : ",") + v.name() + "=" + short_text(v.represent());
  }
  return b.name() + "[" + args + "]";
}

bool selected(const Benchmark& b, const std::vector<std::string>& tags) {
  if (tags.empty()) return true;
  return std::any_of(tags.begin(), tags.end(), [&](const std::string& t) {
    return std::find(b.tag_list().begin(), b.tag_list().end(), t) != b.tag_list().end();
  });
}

}  // namespace

std::vector<PlannedCase> plan_cases(const Registry& registry, const RunOptions& options) {
  std::vector<PlannedCase> cases;
  for (const auto& b : registry.benchmarks()) {
    if (!selected(*b, options.tags)) continue;
    for (Params& p : b->cases()) {
      PlannedCase c{b.get(), std::move(p), {}, {}};
      c.memo_keys = b->memo_keys(c.params);
      c.name = case_name(*b, c.params);
      cases.push_back(std::move(c));
    }
  }
  // Rank each key by first appearance; sorting the cases by their keys' ranks (stable, so
  // registration order breaks ties) makes every key's users contiguous when each case's keys
  // nest (a model, then a session of that model), the common shape.
  std::map<std::string, size_t> rank;
  for (const PlannedCase& c : cases)
    for (const std::string& k : c.memo_keys) rank.emplace(k, rank.size());
  auto ranks = [&](const PlannedCase& c) {
    std::vector<size_t> r;
    for (const std::string& k : c.memo_keys) r.push_back(rank.at(k));
    return r;
  };
  std::stable_sort(cases.begin(), cases.end(),
                   [&](const PlannedCase& a, const PlannedCase& b) { return ranks(a) < ranks(b); });
  return cases;
}

}  // namespace footprint::bench
