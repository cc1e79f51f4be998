// Runs each planned case: memos in, setUp, warmup, timed repetitions, tearDown, memos out.
#include "footprint/bench/runner.hpp"

#include <malloc.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <map>

#include "footprint/core/error.hpp"
#include "footprint/core/heap_counter.hpp"
#include "footprint/runtime/process_memory.hpp"

namespace footprint::bench {
namespace {

double cpu_now_ms() {
  // Process CPU time: the runtime's OpenMP threads work for the body too.
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Restarts VmHWM from the current RSS so each case's peak is its own (Linux >= 4.0).
void reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}

uint64_t peak_rss() {
  const auto m = runtime::read_process_memory();
  return m ? m->peak_rss_bytes : 0;
}

// The last case index that uses each key.
std::map<std::string, size_t> last_users(const std::vector<PlannedCase>& cases) {
  std::map<std::string, size_t> last;
  for (size_t i = 0; i < cases.size(); ++i)
    for (const std::string& k : cases[i].memo_keys) last[k] = i;
  return last;
}

void time_body(const Benchmark& b, State& state, const RunOptions& o, Record& r) {
  for (int i = 0; i < o.warmup; ++i) b.body()(state);
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < o.repetitions; ++i) {
    const double c0 = cpu_now_ms();
    const auto t0 = Clock::now();
    b.body()(state);
    r.wall_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    r.cpu_ms.push_back(cpu_now_ms() - c0);
  }
  r.wall = summarize(r.wall_ms);
  r.cpu = summarize(r.cpu_ms);
}

void measure_case(const PlannedCase& c, MemoCache& memos, const RunOptions& o, Record& r) {
  for (const std::string& k : c.memo_keys)
    if (memos.defined(k)) memos.ensure(k);
  State state(c.params, memos);
  const heap::Stats before = heap::snapshot();
  heap::reset_peak();
  const Benchmark& b = *c.benchmark;
  if (b.setup_hook()) b.setup_hook()(state);
  time_body(b, state, o, r);
  if (b.teardown_hook()) b.teardown_hook()(state);
  state.user().reset();
  const heap::Stats after = heap::snapshot();
  r.peak_heap_bytes =
      after.peak_bytes > before.current_bytes ? after.peak_bytes - before.current_bytes : 0;
  r.net_heap_bytes =
      static_cast<int64_t>(after.current_bytes) - static_cast<int64_t>(before.current_bytes);
  r.allocations = after.allocations - before.allocations;
  r.predicted_peak_bytes = state.predicted_peak_bytes();
  r.counters = state.counters();
}

Record run_case(PlannedCase& c, MemoCache& memos, const RunOptions& o) {
  Record r;
  r.name = c.name;
  r.family = c.benchmark->name();
  r.tags = c.benchmark->tag_list();
  for (const Param& p : c.params.all()) r.params.push_back(p.represent());
  if (o.reset_peak_rss) reset_peak_rss();
  try {
    measure_case(c, memos, o, r);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.peak_rss_bytes = peak_rss();
  // The record has what it needs; the runner's share of the values goes now, not at the end.
  for (Param& p : c.params.all()) p.release();
  return r;
}

}  // namespace

RunRecords run(const Registry& registry, const RunOptions& options) {
  if (options.repetitions < 1) throw UsageError("repetitions must be at least 1");
  RunRecords out;
  out.context = current_context();
  std::vector<PlannedCase> cases = plan_cases(registry, options);
  const auto last = last_users(cases);
  MemoCache memos(options.memo_budget_bytes);
  registry.define_memos(memos);
  for (size_t i = 0; i < cases.size(); ++i) {
    out.records.push_back(run_case(cases[i], memos, options));
    if (options.on_record) options.on_record(out.records.back());
    bool evicted = false;
    if (options.evict) {
      for (const std::string& k : cases[i].memo_keys)
        if (last.at(k) == i) evicted |= memos.evict(k);
    }
    // Freed memos often sit in glibc's free lists; give the pages back so the next memo's
    // growth is not measured on top of them.
    if (evicted) malloc_trim(0);
    out.peak_rss_bytes = std::max(out.peak_rss_bytes, out.records.back().peak_rss_bytes);
  }
  out.memo_creations = memos.creations();
  out.memo_evictions = memos.evictions();
  memos.clear();
  return out;
}

}  // namespace footprint::bench
