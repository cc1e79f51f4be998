// A matrix product's weight matrix in the layout oneDNN's matmul streams: packed once when the
// model is prepared (the original then released, the packed bytes reported), packed on every run
// where B is computed, left as stored where the layout would pad a narrow B; the product is the
// same in each case and the run stays inside its plan.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "footprint/core/heap_counter.hpp"
#include "footprint/graph/builder.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/runtime/op_kernels.hpp"
#include "footprint/runtime/session.hpp"
#include "graph/decomposed_ops.hpp"
#include "test_support.hpp"

namespace footprint::graph {
namespace {

using Ints = std::vector<int64_t>;

// B's element (k, n), exact in float and varied across rows and columns.
float weight(int64_t k, int64_t n) {
  return static_cast<float>((k * 7 + n * 3) % 11) * 0.125F - 0.625F;
}

// A's element (m, k).
float activation(int64_t m, int64_t k) {
  return static_cast<float>((m * 5 + k) % 7) * 0.25F - 0.75F;
}

enum class Form { matmul, matmul_add, gemm_trans_b, computed_b };

struct Case {
  std::string name;
  Form form;
  int64_t m, k, n;
  bool packed;  // expected: B in a layout of the primitive's own
};

SharedValue b_values(const Case& c) {
  const bool transposed = c.form == Form::gemm_trans_b;
  auto w = HostValue::make(DType::float32, transposed ? Ints{c.n, c.k} : Ints{c.k, c.n});
  for (int64_t k = 0; k < c.k; ++k) {
    for (int64_t n = 0; n < c.n; ++n) {
      w->span<float>()[static_cast<size_t>(transposed ? n * c.k + k : k * c.n + n)] = weight(k, n);
    }
  }
  return w;
}

// x [m, k] of activation(m, k).
runtime::Tensor x_input(const Case& c) {
  runtime::Tensor x("x", DType::float32, Ints{c.m, c.k});
  auto v = x.ref().span<float>();
  for (int64_t m = 0; m < c.m; ++m) {
    for (int64_t k = 0; k < c.k; ++k) v[static_cast<size_t>(m * c.k + k)] = activation(m, k);
  }
  return x;
}

// Y's element (m, n) in double: A B, plus the bias where the form has one.
double expected(const Case& c, int64_t m, int64_t n) {
  double want = c.form == Form::matmul_add || c.form == Form::gemm_trans_b
                    ? static_cast<double>(n % 3) * 0.5
                    : 0.0;
  for (int64_t k = 0; k < c.k; ++k) {
    want += static_cast<double>(activation(m, k)) * static_cast<double>(weight(k, n));
  }
  return want;
}

// The product of x by B as `c` has it, written to `path`.
void write_product(const Case& c, const std::filesystem::path& path) {
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(c.m), Dim::known(c.k)});
  auto bias = HostValue::make(DType::float32, {c.n});
  for (int64_t n = 0; n < c.n; ++n) {
    bias->span<float>()[static_cast<size_t>(n)] = static_cast<float>(n % 3) * 0.5F;
  }
  Var y;
  switch (c.form) {
    case Form::matmul:
      y = b.matmul(x, b.constant(b_values(c), "w"));
      break;
    case Form::matmul_add:  // fused into footprint::MatMulAdd
      y = b.add(b.matmul(x, b.constant(b_values(c), "w")), b.constant(bias, "bias"));
      break;
    case Form::gemm_trans_b:
      y = b.gemm(x, b.constant(b_values(c), "w"), b.constant(bias, "bias"), true);
      break;
    case Form::computed_b:
      y = b.matmul(x, b.input("w", DType::float32, {Dim::known(c.k), Dim::known(c.n)}));
      break;
  }
  b.output(y, "y");
  b.write_onnx(path);
}

TEST(PackedProducts, AWeightMatrixIsPackedIntoTheProductsLayoutAndGivesTheSameProduct) {
  const std::vector<Case> cases = {
      {"a transformer's up-projection", Form::matmul_add, 16, 256, 1024, true},
      {"a decode step's product (one row)", Form::matmul, 1, 512, 768, true},
      {"a classifier head (Gemm, transB, 1000 classes)", Form::gemm_trans_b, 2, 256, 1000, true},
      {"a computed B, packed on every run", Form::computed_b, 8, 128, 256, true},
      {"a narrow B (5 columns), left as stored", Form::matmul, 8, 256, 5, false},
  };
  for (const Case& c : cases) {
    // Written and loaded, so the weights are read from the file's mapping as a user's are.
    footprint::testing::TempDir dir;
    write_product(c, dir.path() / "product.onnx");
    const graph::Model model = graph::load_model(dir.path() / "product.onnx");
    runtime::SessionOptions options;
    options.threads = 1;
    runtime::Session session(model, options);
    std::vector<runtime::Tensor> inputs;
    inputs.push_back(x_input(c));
    if (c.form == Form::computed_b) {
      inputs.emplace_back("w", DType::float32, Ints{c.k, c.n});
      const SharedValue w = b_values(c);
      const auto from = w->span<const float>();
      std::copy(from.begin(), from.end(), inputs[1].ref().span<float>().begin());
    }
    (void)session.run(inputs);
    const auto out = session.run(inputs);
    const runtime::PreparedStats& p = session.prepared();
    const uint64_t b_bytes = static_cast<uint64_t>(c.k * c.n) * sizeof(float);
    if (c.packed) {
      EXPECT_GE(p.packed_weights_bytes, b_bytes) << c.name;
      EXPECT_LE(p.packed_weights_bytes * 8, b_bytes * 9) << c.name << ": padded by at most 1/8";
    } else {
      EXPECT_EQ(p.packed_weights_bytes, 0u) << c.name;
    }
    if (c.packed && c.form != Form::computed_b) {
      // The session reads only the packed copy: the initializer's copy made for alignment is
      // freed, or its mapped pages (those wholly inside it) go back to the OS.
      EXPECT_GE(p.released_constant_bytes + p.released_mapped_bytes, b_bytes - 8192) << c.name;
    }
    EXPECT_EQ(session.last_run().arena_bytes, p.planned_arena_bytes) << c.name;
    if (heap::available()) {
      // A later run allocates its output and oneDNN's few hundred bytes of bookkeeping.
      EXPECT_LE(session.last_run().peak_heap_bytes, p.outputs_bytes + 4096) << c.name;
    }
    ASSERT_EQ(out.size(), 1u);
    const auto y = out[0].ref().span<const float>();
    ASSERT_EQ(y.size(), static_cast<size_t>(c.m * c.n)) << c.name;
    for (int64_t m = 0; m < c.m; ++m) {
      for (int64_t n = 0; n < c.n; ++n) {
        ASSERT_NEAR(y[static_cast<size_t>(m * c.n + n)], expected(c, m, n), 1e-3)
            << c.name << " at row " << m << ", column " << n;
      }
    }
  }
}

// A float16 product runs oneDNN's float32 kernel on a float32 copy of its constant B
// (through_float32.hpp); once that kernel packs B the copy goes, so the state keeps B once, in
// the packed layout, not beside a float32 copy, and the product is the same.
TEST(PackedProducts, AHalfPrecisionWeightIsKeptOnceInThePackedLayout) {
  const Case c{"float16 up-projection", Form::matmul, 16, 256, 1024, true};
  GraphBuilder b(runtime::op_registry());
  const Var x = b.input("x", DType::float32, {Dim::known(c.m), Dim::known(c.k)});
  const Var x16 = b.op1("Cast", {x}, {Attr::of("to", static_cast<int64_t>(DType::float16))});
  // The weights are eighths from -0.625 to 0.625: float16 holds them exactly.
  const Var y16 = b.matmul(x16, b.constant(testing::stored_as(b_values(c), DType::float16), "w"));
  b.output(b.op1("Cast", {y16}, {Attr::of("to", static_cast<int64_t>(DType::float32))}), "y");
  footprint::testing::TempDir dir;
  b.write_onnx(dir.path() / "half.onnx");
  const graph::Model model = graph::load_model(dir.path() / "half.onnx");
  runtime::SessionOptions options;
  options.threads = 1;
  runtime::Session session(model, options);
  std::vector<runtime::Tensor> inputs;
  inputs.push_back(x_input(c));
  const auto out = session.run(inputs);
  const uint64_t float32_b = static_cast<uint64_t>(c.k * c.n) * sizeof(float);
  EXPECT_GE(session.prepared().packed_weights_bytes, float32_b);
  EXPECT_LE(session.prepared().packed_weights_bytes * 8, float32_b * 9)
      << "B kept once: packed, without its float32 copy beside it";
  EXPECT_EQ(session.last_run().arena_bytes, session.prepared().planned_arena_bytes);
  const auto y = out.at(0).ref().span<const float>();
  for (int64_t m = 0; m < c.m; ++m) {
    for (int64_t n = 0; n < c.n; ++n) {
      const double want = expected(c, m, n);
      // The product rounded once to float16: within half a unit of its last place.
      ASSERT_NEAR(y[static_cast<size_t>(m * c.n + n)], want, std::abs(want) / 1024 + 1e-3)
          << "row " << m << ", column " << n;
    }
  }
}

}  // namespace
}  // namespace footprint::graph
