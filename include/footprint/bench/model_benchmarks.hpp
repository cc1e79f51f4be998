#pragma once
// Benchmarks of ONNX models through runtime::Session, what `footprint bench` runs. Each model
// is a memo ("model:PATH": the mapped, parsed model) and each configuration of it a memo built
// from that one ("session:PATH|threads=T|N=V": the prepared session, its constants and its
// inputs), so a model is loaded once, right before its first benchmark, and released right
// after its last.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "footprint/bench/registry.hpp"

namespace footprint::bench {

struct DimAxis {
  std::string name;
  std::vector<int64_t> values;
};

struct ModelBenchOptions {
  std::vector<std::filesystem::path> models;
  // Applied to the models whose inputs name the dim; `batch` also to the models it re-batches
  // (graph::rebatch_if_bound: inputs of a fixed leading extent).
  std::vector<DimAxis> dims;
  std::vector<int> threads = {1};
  uint64_t seed = 1;  // random inputs
};

// Registers one benchmark per model ("run/<model folder>"), parametrized by the model, threads
// and the dims that model's inputs name. Returns notes for dims a model does not name (its
// shapes are fixed there) and for the models `batch` re-batches. Loads each model briefly to
// read its input signature; throws footprint::Error for a model that cannot be loaded or
// re-batched.
std::vector<std::string> add_model_benchmarks(Registry& registry, const ModelBenchOptions& options);

}  // namespace footprint::bench
