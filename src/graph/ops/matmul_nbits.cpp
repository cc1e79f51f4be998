#include "footprint/graph/ops/matmul_nbits.hpp"

#include <string>

#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/node_attributes.hpp"

namespace footprint::graph::ops {
namespace {

using W = MatMulNBitsWeights;

[[noreturn]] void fail(const Node& n, int32_t node_id, const std::string& what) {
  throw Error("node " + n.label(node_id) + ": " + what);
}

[[noreturn]] void fail_input(const Node& n, int32_t node_id, size_t i, const std::string& what) {
  fail(n, node_id, std::string(W::input_name(i)) + " " + what);
}

// The element count when every extent is known.
std::optional<int64_t> numel(const Extents& e) {
  int64_t count = 1;
  for (size_t d = 0; d < e.rank(); ++d) {
    const auto v = e.at(d);
    if (!v) return std::nullopt;
    count *= *v;
  }
  return count;
}

bool is_float(DType t) {
  return t == DType::float32 || t == DType::float16 || t == DType::bfloat16;
}

std::string type_text(DType t) {
  return std::string(dtype_name(t));
}

}  // namespace

const char* MatMulNBitsWeights::input_name(size_t i) {
  switch (i) {
    case a:
      return "A (input 0)";
    case b:
      return "B (input 1)";
    case scales:
      return "scales (input 2)";
    case zero_points:
      return "zero_points (input 3)";
    case g_idx:
      return "g_idx (input 4)";
    default:
      return "bias (input 5)";
  }
}

MatMulNBitsWeights MatMulNBitsWeights::decode(const Node& node, int32_t node_id,
                                              std::span<const NBitsOperand> inputs) {
  W w;
  w.k = attr_int(node, "K", 0);
  w.n = attr_int(node, "N", 0);
  w.bits = attr_int(node, "bits", 4);
  w.block_size = attr_int(node, "block_size", 0);
  w.accuracy_level = attr_int(node, "accuracy_level", 0);
  if (w.k <= 0 || w.n <= 0) {
    fail(node, node_id,
         "attributes K and N must be positive, are " + std::to_string(w.k) + " and " +
             std::to_string(w.n));
  }
  // 2, 4 and 8 bits are the widths whose codes never straddle a byte.
  if (w.bits != 2 && w.bits != 4 && w.bits != 8) {
    fail(node, node_id, "attribute bits is " + std::to_string(w.bits) + ", not 2, 4 or 8");
  }
  if (w.block_size < 16 || (w.block_size & (w.block_size - 1)) != 0) {
    fail(node, node_id,
         "attribute block_size is " + std::to_string(w.block_size) +
             ", not a power of two of at least 16");
  }
  if (w.accuracy_level < 0 || w.accuracy_level > 4) {
    fail(node, node_id,
         "attribute accuracy_level is " + std::to_string(w.accuracy_level) + ", not 0 to 4");
  }
  w.blocks = (w.k + w.block_size - 1) / w.block_size;
  w.blob_bytes = w.block_size * w.bits / 8;

  const auto given = [&](size_t i) -> const NBitsOperand* {
    return i < inputs.size() && inputs[i].dtype != DType::undefined ? &inputs[i] : nullptr;
  };
  const NBitsOperand* a_in = given(a);
  const DType real = a_in != nullptr ? a_in->dtype : DType::undefined;
  if (a_in != nullptr) {
    if (!is_float(real)) fail_input(node, node_id, a, "is " + type_text(real) + ", not a float");
    if (a_in->extents) {
      const Extents& e = *a_in->extents;
      if (e.rank() == 0) fail_input(node, node_id, a, "must not be a scalar");
      const auto last = e.at(e.rank() - 1);
      if (last && *last != w.k) {
        fail_input(node, node_id, a, e.to_string() + " does not end in K = " + std::to_string(w.k));
      }
    }
  }
  const NBitsOperand* b_in = given(b);
  if (b_in == nullptr) fail_input(node, node_id, b, "is required");
  if (b_in->dtype != DType::uint8) {
    fail_input(node, node_id, b, "is " + type_text(b_in->dtype) + ", not uint8");
  }
  if (b_in->extents) {
    const Extents& e = *b_in->extents;
    const int64_t want[3] = {w.n, w.blocks, w.blob_bytes};
    bool fits = e.rank() == 3;
    for (size_t d = 0; fits && d < 3; ++d) fits = !e.at(d) || *e.at(d) == want[d];
    if (!fits) {
      fail_input(node, node_id, b,
                 e.to_string() + " is not [N, ceil(K / block_size), block_size x bits / 8] = [" +
                     std::to_string(w.n) + "," + std::to_string(w.blocks) + "," +
                     std::to_string(w.blob_bytes) + "]");
    }
  }
  // A type of A's where A's is known: a float type otherwise.
  const auto check_real = [&](size_t i, const NBitsOperand& t) {
    if (real != DType::undefined ? t.dtype != real : !is_float(t.dtype)) {
      fail_input(node, node_id, i,
                 "is " + type_text(t.dtype) + ", not " +
                     (real != DType::undefined ? type_text(real) + " as A" : "a float"));
    }
  };
  const auto check_count = [&](size_t i, const NBitsOperand& t, int64_t want,
                               const std::string& what) {
    if (!t.extents) return;
    const auto count = numel(*t.extents);
    if (count && *count != want) {
      fail_input(node, node_id, i,
                 t.extents->to_string() + " has " + std::to_string(*count) + " elements, not " +
                     what + " = " + std::to_string(want));
    }
  };
  const NBitsOperand* s_in = given(scales);
  if (s_in == nullptr) fail_input(node, node_id, scales, "is required");
  check_real(scales, *s_in);
  check_count(scales, *s_in, w.n * w.blocks, "N x ceil(K / block_size)");
  if (const NBitsOperand* z = given(zero_points)) {
    if (z->dtype == DType::uint8) {
      w.zero_points_form = NBitsZeroPoints::packed;
      check_count(zero_points, *z, w.n * w.zero_point_row_bytes(),
                  "N x ceil(ceil(K / block_size) x bits / 8) (packed)");
    } else {
      if (!is_float(z->dtype)) {
        fail_input(node, node_id, zero_points,
                   "is " + type_text(z->dtype) + ", not uint8 (packed) or A's float type");
      }
      check_real(zero_points, *z);
      w.zero_points_form = NBitsZeroPoints::unpacked;
      check_count(zero_points, *z, w.n * w.blocks, "N x ceil(K / block_size) (unpacked)");
    }
  }
  if (const NBitsOperand* g = given(g_idx)) {
    if (g->dtype != DType::int32) {
      fail_input(node, node_id, g_idx, "is " + type_text(g->dtype) + ", not int32");
    }
    check_count(g_idx, *g, w.k, "K");
    w.has_g_idx = true;
  }
  if (const NBitsOperand* bias_in = given(bias)) {
    check_real(bias, *bias_in);
    if (bias_in->extents && bias_in->extents->rank() != 1) {
      fail_input(node, node_id, bias, bias_in->extents->to_string() + " is not [N]");
    }
    check_count(bias, *bias_in, w.n, "N");
    w.has_bias = true;
  }
  return w;
}

}  // namespace footprint::graph::ops
