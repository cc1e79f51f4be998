// Planner micro-benchmarks (Google Benchmark).
//
//   plan_bench                                   # everything below
//   plan_bench --benchmark_filter=Heuristic      # one group
//
//   Heuristic/<algo>/<instance>   naive, greedy-size, greedy-breadth, best-fit on the eleven
//                                 MiniMalloc instances (../shared/benchmarks/minimalloc)
//   FitCapacity/<instance>        `auto` asked for a plan within MiniMalloc's capacity of
//                                 1,048,576 bytes (MiniMalloc's own question), one plan a run
//   BestFit/<n>                   `best-fit` (the heap simulation and the two global best fits
//                                 through the time index) on n random lifetimes
//   Validate/<n>                  the validator on the heap simulation's plan of n buffers
//
// Counters: arena_bytes, lower_bound_bytes, ratio (arena / lower bound), buffers.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "footprint/plan/buffer_csv.hpp"
#include "footprint/plan/lower_bound.hpp"
#include "footprint/plan/planner.hpp"
#include "footprint/plan/validate.hpp"

#ifndef FOOTPRINT_SHARED_DIR
#define FOOTPRINT_SHARED_DIR "../shared"
#endif

namespace {

namespace fs = std::filesystem;
namespace plan = footprint::plan;

constexpr int64_t kCapacity = 1048576;

std::vector<fs::path> instances() {
  std::vector<fs::path> out;
  const fs::path dir = fs::path(FOOTPRINT_SHARED_DIR) / "benchmarks" / "minimalloc";
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".csv") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Random lifetimes over a time axis as long as the instance, sizes from 64 B to 64 KiB.
std::vector<plan::Buffer> random_lifetimes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<plan::Buffer> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto lower = static_cast<int64_t>(rng() % n);
    const auto length = static_cast<int64_t>(1 + rng() % 64);
    const auto size = static_cast<int64_t>(64 << (rng() % 11));
    out.push_back({std::to_string(i), lower, lower + length, size, 64, std::nullopt});
  }
  return out;
}

void report(benchmark::State& state, const std::vector<plan::Buffer>& buffers,
            const plan::Plan& p) {
  const int64_t bound = plan::lower_bound_bytes(buffers);
  state.counters["arena_bytes"] = static_cast<double>(p.arena_bytes);
  state.counters["lower_bound_bytes"] = static_cast<double>(bound);
  state.counters["ratio"] = bound > 0 ? static_cast<double>(p.arena_bytes) / bound : 1.0;
  state.counters["buffers"] = static_cast<double>(buffers.size());
}

void heuristic(benchmark::State& state, const std::string& algo,
               const std::vector<plan::Buffer>& buffers) {
  plan::Plan p;
  for (auto _ : state) {
    p = plan::plan_buffers(buffers, algo);
    benchmark::DoNotOptimize(p.offsets.data());
  }
  report(state, buffers, p);
}

void fit_capacity(benchmark::State& state, const std::vector<plan::Buffer>& buffers) {
  plan::PlanOptions o;
  o.capacity_bytes = kCapacity;
  o.time_limit_s = 60;
  plan::Plan p;
  for (auto _ : state) {
    p = plan::plan_buffers(buffers, "auto", o);
    if (p.arena_bytes > kCapacity) state.SkipWithError("no plan within the capacity");
  }
  report(state, buffers, p);
}

void best_fit(benchmark::State& state) {
  const auto buffers = random_lifetimes(static_cast<size_t>(state.range(0)), 1);
  plan::Plan p;
  for (auto _ : state) {
    p = plan::plan_buffers(buffers, "best-fit");
    benchmark::DoNotOptimize(p.offsets.data());
  }
  report(state, buffers, p);
}

void validate(benchmark::State& state) {
  const auto buffers = random_lifetimes(static_cast<size_t>(state.range(0)), 2);
  const plan::Plan p = plan::plan_buffers(buffers, "best-fit");
  for (auto _ : state) benchmark::DoNotOptimize(plan::find_violation(buffers, p.offsets));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

}  // namespace

int main(int argc, char** argv) {
  // Kept alive for the whole run: the benchmarks refer to them.
  static std::vector<std::vector<plan::Buffer>> loaded;
  const auto files = instances();
  loaded.reserve(files.size());
  for (const auto& f : files) loaded.push_back(plan::read_buffers_csv(f));
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string name = files[i].stem().stem().string();
    for (const char* algo : {"naive", "greedy-size", "greedy-breadth", "best-fit"}) {
      benchmark::RegisterBenchmark(("Heuristic/" + std::string(algo) + "/" + name).c_str(),
                                   heuristic, std::string(algo), loaded[i])
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(("FitCapacity/" + name).c_str(), fit_capacity, loaded[i])
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
  }
  benchmark::RegisterBenchmark("BestFit", best_fit)
      ->RangeMultiplier(10)
      ->Range(100000, 1000000)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Validate", validate)
      ->RangeMultiplier(10)
      ->Range(1000, 1000000)
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
