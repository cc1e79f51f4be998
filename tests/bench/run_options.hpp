#pragma once
// RunOptions for tests without designated initializers (which -Wmissing-field-initializers
// rejects when fields are left out).
#include "footprint/bench/runner.hpp"

namespace footprint::bench::test_support {

inline RunOptions reps(int repetitions, int warmup = 1) {
  RunOptions o;
  o.repetitions = repetitions;
  o.warmup = warmup;
  return o;
}

}  // namespace footprint::bench::test_support
