#pragma once
// What an onnxruntime MatMulNBits node (com.microsoft) asks for, decoded once: Y = A x W^T
// (+ bias), W [N, K] dequantized block-wise along K from B's bit-packed codes,
//   W[n][k] = (code(n, k) - zero_point(n, blk(k))) x scales[n][blk(k)],
// blk(k) = k / block_size (or g_idx[k] where given). Shape inference and the kernel both take it,
// so a model inference accepts is one the kernel runs, and a bad one is refused naming the node
// and the input at fault.
//
//   const auto w = graph::ops::MatMulNBitsWeights::decode(node, node_id, operands);
//   w.code(b_row, k)                 // the k-th code of row n of B (b_row: B's bytes of row n)
//   w.zero_point_code(zp_row, blk)   // a packed zero point, as B's codes are packed
//
// The layout (onnxruntime's contrib operator documentation): B is uint8 [N, blocks, blob_bytes],
// blocks = ceil(K / block_size), blob_bytes = block_size x bits / 8, codes packed low bits first
// within each byte (for 4 bits: the first in the low nibble), K's last block padded. scales has
// N x blocks elements ([N, blocks], or flat as older exporters wrote it), of A's type. The zero
// points are either packed like B (uint8, ceil(blocks x bits / 8) bytes per row) or unpacked,
// one float of A's type per block; absent, every zero point is 2^(bits - 1) (8 for 4 bits).
// g_idx (deprecated) is int32 [K], the block of each k; bias is [N] of A's type.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "footprint/core/dtype.hpp"
#include "footprint/graph/ops/quantization.hpp"

namespace footprint::graph {
struct Node;
}

namespace footprint::graph::ops {

// An input as far as it is known: its dtype (undefined: omitted) and extents (nullopt: no rank).
struct NBitsOperand {
  DType dtype = DType::undefined;
  std::optional<Extents> extents;
};

enum class NBitsZeroPoints : uint8_t { none, packed, unpacked };

struct MatMulNBitsWeights {
  enum Input : size_t { a = 0, b = 1, scales = 2, zero_points = 3, g_idx = 4, bias = 5 };

  int64_t k = 0, n = 0, bits = 4, block_size = 0, accuracy_level = 0;
  int64_t blocks = 0;      // per row of W: ceil(K / block_size)
  int64_t blob_bytes = 0;  // one block's codes: block_size x bits / 8
  NBitsZeroPoints zero_points_form = NBitsZeroPoints::none;
  bool has_g_idx = false, has_bias = false;

  // From the node's attributes (K, N, bits, block_size, accuracy_level) and its inputs as known
  // (`inputs[i]` for input i; fewer entries: the rest omitted). Fails naming the node and the
  // input on what cannot be this op's: K or N not positive, bits other than 2, 4 or 8, a
  // block_size that is not a power of two of at least 16, A not a float or its last extent not
  // K, B not uint8 [N, blocks, blob_bytes], scales of another type than A or not N x blocks
  // elements, zero points of neither form, g_idx not int32 [K], a bias not [N] of A's type.
  // Extents not yet known are not checked (inference); the kernel's are all known.
  static MatMulNBitsWeights decode(const Node& node, int32_t node_id,
                                   std::span<const NBitsOperand> inputs);

  // Bytes of one row of packed zero points.
  int64_t zero_point_row_bytes() const { return (blocks * bits + 7) / 8; }
  int32_t default_zero_point() const { return int32_t{1} << (bits - 1); }
  // Code i (0-based, along K) of a row of B, or packed zero point i of a row of zero points:
  // bits x i from the row's first bit, low bits of each byte first. Blocks are whole bytes, so
  // B's row is one bit stream too.
  int32_t code(const uint8_t* row, int64_t i) const {
    const int64_t bit = i * bits;
    return (row[bit / 8] >> (bit % 8)) & ((1 << bits) - 1);
  }

  // The name of input i as the documentation calls it ("scales (input 2)"), for messages.
  static const char* input_name(size_t i);
};

}  // namespace footprint::graph::ops
