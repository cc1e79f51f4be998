#pragma once
// One run of a model with graph::fuse on or off, and the check that both give the same outputs:
// what every test of a fusion that the runtime runs compares.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "footprint/onnx/model.hpp"
#include "footprint/runtime/session.hpp"

namespace footprint::testing {

struct Outcome {
  std::vector<float> y;  // output 0
  runtime::PreparedStats prepared;
  uint64_t obtained = 0;  // the arena the run obtained
};

// Seeded values in [-scale/2, scale/2).
inline void seeded(runtime::Tensor& t, uint32_t seed, float scale) {
  uint32_t s = seed;
  for (float& e : t.ref().span<float>()) {
    s = s * 1664525U + 1013904223U;
    e = (static_cast<float>(s >> 8) / 16777216.0F - 0.5F) * scale;
  }
}

inline Outcome run_once(const graph::Model& model, bool fuse,
                        const std::vector<runtime::Tensor>& inputs, int threads = 1,
                        bool carry_float32 = true) {
  runtime::SessionOptions options;
  options.fuse = fuse;
  options.threads = threads;
  options.carry_float32 = carry_float32;
  runtime::Session session(model, options);
  const auto out = session.run(inputs);
  Outcome o;
  o.prepared = session.prepared();
  o.obtained = session.last_run().arena_bytes;
  const auto y = out.at(0).ref().span<const float>();
  o.y.assign(y.begin(), y.end());
  return o;
}

// Whether the run made a node of `op` (a "footprint::Elementwise" line of PreparedStats::patterns).
inline bool made_pattern(const Outcome& o, const std::string& op) {
  return std::any_of(o.prepared.patterns.begin(), o.prepared.patterns.end(),
                     [&](const std::string& line) { return line.rfind(op + " '", 0) == 0; });
}

// The two runs give output 0 element for element, and it varies (not a saturated, constant
// output that any kernel would match).
inline void expect_same_varied_outputs(const Outcome& a, const Outcome& b,
                                       const std::string& what = "") {
  ASSERT_EQ(a.y.size(), b.y.size()) << what;
  size_t varied = 0;
  for (size_t i = 0; i < a.y.size(); ++i) {
    EXPECT_EQ(a.y[i], b.y[i]) << i << " " << what;
    varied += a.y[i] != a.y[0] ? 1 : 0;
  }
  EXPECT_GT(varied, a.y.size() / 2) << what;
}

// The fused run gives the unfused run's output 0, within `rtol` (relative to 1 + |value|: the
// fused kernels sum in another order).
inline void expect_same_outputs(const Outcome& fused, const Outcome& apart, float rtol,
                                const std::string& what) {
  ASSERT_EQ(fused.y.size(), apart.y.size()) << what;
  for (size_t i = 0; i < fused.y.size(); ++i) {
    ASSERT_NEAR(fused.y[i], apart.y[i], rtol * (1 + std::abs(apart.y[i]))) << what << " at " << i;
  }
}

}  // namespace footprint::testing
