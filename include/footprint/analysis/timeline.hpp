#pragma once
// The per-step memory timeline of a MemoryProgram, its lower bound, and what is alive at the
// peak and why.
//
//   Timeline t = simulate(program);
//   t.total_peak_bytes;  t.alive_at_peak[0].why;  t.buffers  // (lifetimes for the planner)
#include <cstdint>
#include <string>
#include <vector>

#include "footprint/analysis/memory_program.hpp"

namespace footprint::analysis {

inline constexpr uint64_t kArenaAlignment = 64;
inline uint64_t arena_round(uint64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

struct StepMemory {
  int index = 0;
  std::string node;
  std::string op;
  uint64_t alloc_bytes = 0;  // buffers this step allocates (outputs that are not views)
  uint64_t free_bytes = 0;   // buffers released right after it
  uint64_t workspace_bytes = 0;
  uint64_t live_bytes = 0;        // activations + workspace during the step (what an arena holds)
  uint64_t live_arena_bytes = 0;  // the same with every buffer rounded up to 64 bytes
  uint64_t total_bytes = 0;       // everything live during the step, weights included
};

struct AliveTensor {
  std::string tensor;
  uint64_t bytes = 0;
  Category category = Category::activations;
  std::string producer;       // step name, or "" for inputs and weights
  std::string last_consumer;  // step name, or "" when nothing reads it
  std::string why;
  std::string bound_by{};  // set when `bytes` is an upper bound (ProgramTensor::bound_by)
};

// A buffer's lifetime in steps, [first, last] inclusive, for the planner. Activations name their
// tensor; a step's workspace (category workspace, tensor -1) lives for that step alone.
struct BufferLifetime {
  int tensor = 0;
  int first = 0;
  int last = 0;
  uint64_t bytes = 0;
  Category category = Category::activations;
};

struct Timeline {
  uint64_t weights_bytes = 0;
  // Weights only preparing reads (ProgramTensor::prepare_only), not in weights_bytes.
  uint64_t prepare_only_weights_bytes = 0;
  uint64_t inputs_bytes = 0;
  uint64_t outputs_bytes = 0;
  uint64_t activations_peak_bytes = 0;  // activations alone, at their own peak
  uint64_t workspace_peak_bytes = 0;
  uint64_t total_peak_bytes = 0;
  uint64_t lower_bound_bytes = 0;        // max over steps of live_bytes
  uint64_t lower_bound_arena_bytes = 0;  // max over steps of live_arena_bytes
  int peak_step = -1;                    // first step reaching total_peak_bytes (-1: no steps)
  uint64_t after_bytes = 0;              // held when the run ends (outputs, caller-held inputs)
  std::vector<StepMemory> steps;
  std::vector<AliveTensor> alive_at_peak;
  std::vector<BufferLifetime> buffers;  // activation and workspace buffers of the arena
  // Per tensor, the tensor whose buffer holds it: itself, or what it views or was written into
  // in place. An executor places each tensor where its storage tensor was planned.
  std::vector<int> storage;
};

// Throws footprint::Error when the program is inconsistent (a tensor read before it exists or
// after an explicit free, a view of a missing tensor).
Timeline simulate(const MemoryProgram& program);

}  // namespace footprint::analysis
