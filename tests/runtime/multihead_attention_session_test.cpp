// com.microsoft MultiHeadAttention run inside its plan (its values against onnxruntime are
// bench/contrib_mha_vs_ort.py's, against a float64 reference python/tests/
// test_contrib_transformer.py's): key and value packed into one tensor give the unpacked bytes,
// with or without present outputs (the keys then in the workspace), on one thread or two; the
// present caches hold the past then the new rows; the arena obtained is the one planned.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "fused_outcome.hpp"

namespace footprint::testing {
namespace {

using graph::Attr;
using graph::BuiltGraph;
using graph::GraphBuilder;
using graph::Var;

constexpr int64_t kBatch = 2, kSeq = 3, kKv = 5, kPast = 4, kHeads = 2, kHead = 8;

std::vector<Dim> known(const std::vector<int64_t>& d) {
  std::vector<Dim> out(d.size());
  for (size_t i = 0; i < d.size(); ++i) out[i] = Dim::known(d[i]);
  return out;
}

// packed: key holds K and V [B, L, N, 2, H]; presents: the node outputs them (with a past).
BuiltGraph build(bool packed, bool presents) {
  GraphBuilder b(runtime::op_registry());
  std::vector<Var> in{b.input("q", DType::float32, known({kBatch, kSeq, kHeads * kHead}))};
  if (packed) {
    in.push_back(b.input("kv", DType::float32, known({kBatch, kKv, kHeads, 2, kHead})));
    in.emplace_back();
  } else {
    in.push_back(b.input("k", DType::float32, known({kBatch, kKv, kHeads * kHead})));
    in.push_back(b.input("v", DType::float32, known({kBatch, kKv, kHeads * kHead})));
  }
  if (presents) {
    in.insert(in.end(), {Var(), Var(), Var()});
    in.push_back(b.input("pk", DType::float32, known({kBatch, kHeads, kPast, kHead})));
    in.push_back(b.input("pv", DType::float32, known({kBatch, kHeads, kPast, kHead})));
  }
  const std::vector<Var> out =
      b.op("MultiHeadAttention", in,
           {Attr::of("num_heads", kHeads), Attr::of("unidirectional", int64_t{1})},
           presents ? 3 : 1, "com.microsoft");
  b.output(out[0], "y");
  if (presents) {
    b.output(out[1], "present_key");
    b.output(out[2], "present_value");
  }
  return b.to_graph();
}

runtime::Tensor seeded_tensor(const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
  runtime::Tensor t(name, DType::float32, std::move(dims));
  seeded(t, seed, 2.0F);
  return t;
}

std::vector<runtime::Tensor> inputs_of(bool packed, bool presents) {
  std::vector<runtime::Tensor> in;
  in.push_back(seeded_tensor("q", {kBatch, kSeq, kHeads * kHead}, 1));
  runtime::Tensor k = seeded_tensor("k", {kBatch, kKv, kHeads * kHead}, 2);
  runtime::Tensor v = seeded_tensor("v", {kBatch, kKv, kHeads * kHead}, 3);
  if (packed) {
    runtime::Tensor kv("kv", DType::float32, {kBatch, kKv, kHeads, 2, kHead});
    auto dst = kv.ref().span<float>().begin();
    for (int64_t t = 0; t < kBatch * kKv * kHeads; ++t) {
      dst = std::copy_n(k.ref().span<const float>().begin() + t * kHead, kHead, dst);
      dst = std::copy_n(v.ref().span<const float>().begin() + t * kHead, kHead, dst);
    }
    in.push_back(std::move(kv));
  } else {
    in.push_back(std::move(k));
    in.push_back(std::move(v));
  }
  if (presents) {
    in.push_back(seeded_tensor("pk", {kBatch, kHeads, kPast, kHead}, 4));
    in.push_back(seeded_tensor("pv", {kBatch, kHeads, kPast, kHead}, 5));
  }
  return in;
}

struct Outputs {
  std::vector<std::vector<float>> values;
  uint64_t planned = 0, obtained = 0;
};

Outputs run(bool packed, bool presents, int threads) {
  const BuiltGraph g = build(packed, presents);
  runtime::SessionOptions options;
  options.threads = threads;
  runtime::Session session(*g.model, options);
  Outputs r;
  for (const runtime::Tensor& t : session.run(inputs_of(packed, presents))) {
    const auto s = t.ref().span<const float>();
    r.values.emplace_back(s.begin(), s.end());
  }
  r.planned = session.prepared().planned_arena_bytes;
  r.obtained = session.last_run().arena_bytes;
  return r;
}

TEST(MultiHeadAttentionSession, PackedKeysAndValuesWithOrWithoutPresentsGiveTheSameBytes) {
  for (const bool presents : {false, true}) {
    const Outputs apart = run(false, presents, 1);
    const Outputs packed = run(true, presents, 1);
    const Outputs two = run(false, presents, 2);
    EXPECT_EQ(apart.obtained, apart.planned);
    EXPECT_EQ(packed.obtained, packed.planned);
    ASSERT_EQ(apart.values.size(), presents ? 3u : 1u);
    for (size_t i = 0; i < apart.values.size(); ++i) {
      EXPECT_EQ(apart.values[i], packed.values[i]) << "output " << i << ", packed";
      EXPECT_EQ(apart.values[i], two.values[i]) << "output " << i << ", two threads";
    }
    size_t varied = 0;
    for (const float y : apart.values[0]) varied += y != apart.values[0][0] ? 1 : 0;
    EXPECT_GT(varied, apart.values[0].size() / 2);
  }
}

TEST(MultiHeadAttentionSession, PresentCachesHoldThePastThenTheNewRows) {
  const Outputs r = run(false, true, 1);
  const std::vector<runtime::Tensor> in = inputs_of(false, true);
  const auto k = in[1].ref().span<const float>();
  const auto pk = in[3].ref().span<const float>();
  const std::vector<float>& present = r.values[1];
  ASSERT_EQ(present.size(), static_cast<size_t>(kBatch * kHeads * (kPast + kKv) * kHead));
  for (int64_t b = 0; b < kBatch; ++b) {
    for (int64_t h = 0; h < kHeads; ++h) {
      for (int64_t j = 0; j < kPast + kKv; ++j) {
        for (int64_t c = 0; c < kHead; c += 3) {
          const float want =
              j < kPast ? pk[static_cast<size_t>(((b * kHeads + h) * kPast + j) * kHead + c)]
                        : k[static_cast<size_t>(((b * kKv + j - kPast) * kHeads + h) * kHead + c)];
          ASSERT_EQ(
              present[static_cast<size_t>(((b * kHeads + h) * (kPast + kKv) + j) * kHead + c)],
              want)
              << "b " << b << " h " << h << " j " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace footprint::testing
