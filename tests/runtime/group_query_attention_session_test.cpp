// com.microsoft GroupQueryAttention run inside its plan (the values against onnxruntime are
// bench/contrib_gqa_vs_ort.py's, and a float64 reading of its semantics is
// python/tests/test_contrib_transformer.py's): the present caches hold the past's rows, then the
// new keys and values, then zeros; packing query, key and value into one tensor changes nothing;
// two threads give one thread's bytes; the arena obtained is the one planned.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "footprint/graph/builder.hpp"
#include "footprint/graph/host_value.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "fused_outcome.hpp"

namespace footprint::testing {
namespace {

using graph::Attr;
using graph::BuiltGraph;
using graph::GraphBuilder;
using graph::HostValue;
using graph::Var;

constexpr int64_t kHeads = 4, kKvHeads = 2, kHead = 16;

struct Case {
  int64_t batch = 2, seq = 1, past = 8, total = 7;
  std::vector<int32_t> seqlens{6, 3};
  bool packed = false, rotary = false;
  int64_t window = -1;
};

template <class T>
Var constant(GraphBuilder& b, DType dtype, std::vector<int64_t> dims, const std::vector<T>& v) {
  auto h = HostValue::make(dtype, std::move(dims));
  std::copy(v.begin(), v.end(), h->template span<T>().begin());
  return b.constant(h);
}

BuiltGraph build(const Case& c) {
  GraphBuilder b(runtime::op_registry());
  const int64_t width = c.packed ? (kHeads + 2 * kKvHeads) * kHead : kHeads * kHead;
  const auto known = [](const std::vector<int64_t>& d) {
    std::vector<Dim> out(d.size());
    for (size_t i = 0; i < d.size(); ++i) out[i] = Dim::known(d[i]);
    return out;
  };
  std::vector<Var> in{b.input("q", DType::float32, known({c.batch, c.seq, width}))};
  in.push_back(c.packed ? Var()
                        : b.input("k", DType::float32, known({c.batch, c.seq, kKvHeads * kHead})));
  in.push_back(c.packed ? Var()
                        : b.input("v", DType::float32, known({c.batch, c.seq, kKvHeads * kHead})));
  for (const char* name : {"pk", "pv"}) {
    in.push_back(c.past > 0
                     ? b.input(name, DType::float32, known({c.batch, kKvHeads, c.past, kHead}))
                     : Var());
  }
  in.push_back(constant<int32_t>(b, DType::int32, {c.batch}, c.seqlens));
  in.push_back(constant<int32_t>(b, DType::int32, {}, {static_cast<int32_t>(c.total)}));
  std::vector<Attr> attrs{Attr::of("num_heads", kHeads), Attr::of("kv_num_heads", kKvHeads),
                          Attr::of("local_window_size", c.window)};
  if (c.rotary) {
    std::vector<float> cos, sin;
    for (int64_t p = 0; p < 32; ++p) {
      for (int64_t i = 0; i < kHead / 2; ++i) {
        const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * i / kHead);
        cos.push_back(static_cast<float>(std::cos(angle)));
        sin.push_back(static_cast<float>(std::sin(angle)));
      }
    }
    in.push_back(constant<float>(b, DType::float32, {32, kHead / 2}, cos));
    in.push_back(constant<float>(b, DType::float32, {32, kHead / 2}, sin));
    attrs.push_back(Attr::of("do_rotary", int64_t{1}));
  }
  const std::vector<Var> out = b.op("GroupQueryAttention", in, attrs, 3, "com.microsoft");
  b.output(out[0], "y");
  b.output(out[1], "present_key");
  b.output(out[2], "present_value");
  return b.to_graph();
}

runtime::Tensor seeded_tensor(const std::string& name, std::vector<int64_t> dims, uint32_t seed) {
  runtime::Tensor t(name, DType::float32, std::move(dims));
  seeded(t, seed, 2.0F);
  return t;
}

// Query, key and value apart, or the same values packed token by token into one query; then
// the caches.
std::vector<runtime::Tensor> inputs_of(const Case& c, bool packed) {
  std::vector<runtime::Tensor> in;
  in.push_back(seeded_tensor("q", {c.batch, c.seq, kHeads * kHead}, 1));
  in.push_back(seeded_tensor("k", {c.batch, c.seq, kKvHeads * kHead}, 2));
  in.push_back(seeded_tensor("v", {c.batch, c.seq, kKvHeads * kHead}, 3));
  if (packed) {
    runtime::Tensor all("q", DType::float32, {c.batch, c.seq, (kHeads + 2 * kKvHeads) * kHead});
    auto dst = all.ref().span<float>().begin();
    for (int64_t t = 0; t < c.batch * c.seq; ++t) {
      for (const runtime::Tensor& part : in) {
        const auto src = part.ref().span<const float>();
        const auto width = static_cast<int64_t>(src.size()) / (c.batch * c.seq);
        dst = std::copy_n(src.begin() + t * width, width, dst);
      }
    }
    in.clear();
    in.push_back(std::move(all));
  }
  if (c.past > 0) {
    in.push_back(seeded_tensor("pk", {c.batch, kKvHeads, c.past, kHead}, 4));
    in.push_back(seeded_tensor("pv", {c.batch, kKvHeads, c.past, kHead}, 5));
  }
  return in;
}

struct Outputs {
  std::vector<std::vector<float>> outputs;
  uint64_t planned = 0, obtained = 0;
};

Outputs run(const Case& c, bool packed, int threads) {
  Case built = c;
  built.packed = packed;
  const BuiltGraph g = build(built);
  runtime::SessionOptions options;
  options.threads = threads;
  runtime::Session session(*g.model, options);
  Outputs r;
  for (const runtime::Tensor& t : session.run(inputs_of(c, packed))) {
    const auto s = t.ref().span<const float>();
    r.outputs.emplace_back(s.begin(), s.end());
  }
  r.planned = session.prepared().planned_arena_bytes;
  r.obtained = session.last_run().arena_bytes;
  return r;
}

std::vector<Case> cases() {
  std::vector<Case> all;
  all.push_back({2, 5, 0, 5, {4, 4}});                   // first prompt
  all.push_back({2, 1, 6, 7, {6, 3}});                   // a growing cache
  all.push_back({2, 1, 12, 7, {6, 3}});                  // one buffer of the maximum length
  all.push_back({1, 3, 4, 7, {6}});                      // a later prompt
  all.push_back({2, 1, 12, 9, {8, 2}, false, true, 3});  // rotary and a window
  return all;
}

TEST(GroupQueryAttentionSession, PresentCachesHoldThePastThenTheNewTokensThenZeros) {
  for (const Case& c : cases()) {
    const std::vector<runtime::Tensor> in = inputs_of(c, false);
    const Outputs r = run(c, false, 1);
    const std::string what = "batch " + std::to_string(c.batch) + ", seq " + std::to_string(c.seq) +
                             ", past " + std::to_string(c.past);
    EXPECT_EQ(r.obtained, r.planned) << what;
    ASSERT_EQ(r.outputs.size(), 3u);
    const int64_t present = std::max(c.total, c.past);
    for (int out = 1; out <= 2; ++out) {
      const std::vector<float>& p = r.outputs[static_cast<size_t>(out)];
      ASSERT_EQ(p.size(), static_cast<size_t>(c.batch * kKvHeads * present * kHead)) << what;
      const auto fresh = in[static_cast<size_t>(out)].ref().span<const float>();
      for (int64_t b = 0; b < c.batch; ++b) {
        const int64_t total_b = c.seqlens[static_cast<size_t>(b)] + 1;
        const int64_t past_b = c.seq == c.total ? 0 : total_b - c.seq;
        for (int64_t g = 0; g < kKvHeads; ++g) {
          for (int64_t j = 0; j < present; ++j) {
            for (int64_t e = 0; e < kHead; e += 5) {
              float want = 0;
              if (j < past_b) {
                want =
                    in[static_cast<size_t>(out) + 2].ref().span<const float>()[static_cast<size_t>(
                        ((b * kKvHeads + g) * c.past + j) * kHead + e)];
              } else if (j < past_b + c.seq && !(out == 1 && c.rotary)) {
                want = fresh[static_cast<size_t>(
                    ((b * c.seq + (j - past_b)) * kKvHeads + g) * kHead + e)];
              } else if (j < past_b + c.seq) {
                continue;  // a turned key (its values: the python and onnxruntime checks)
              }
              ASSERT_EQ(p[static_cast<size_t>(((b * kKvHeads + g) * present + j) * kHead + e)],
                        want)
                  << what << ", output " << out << ", b " << b << " g " << g << " j " << j;
            }
          }
        }
      }
    }
  }
}

TEST(GroupQueryAttentionSession, PackedInputsAndTwoThreadsGiveTheSameBytes) {
  for (const Case& c : cases()) {
    const Outputs apart = run(c, false, 1);
    const Outputs two = run(c, false, 2);
    const Outputs packed = run(c, true, 1);
    EXPECT_EQ(packed.obtained, packed.planned);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(apart.outputs[i], two.outputs[i]) << "output " << i << ", two threads";
      EXPECT_EQ(apart.outputs[i], packed.outputs[i]) << "output " << i << ", packed";
    }
    size_t varied = 0;
    for (const float y : apart.outputs[0]) varied += y != apart.outputs[0][0] ? 1 : 0;
    EXPECT_GT(varied, apart.outputs[0].size() / 2);
  }
}

}  // namespace
}  // namespace footprint::testing
