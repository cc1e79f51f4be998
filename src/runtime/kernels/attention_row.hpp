#pragma once
// The per-query-row arithmetic the cache-holding attention kernels share (com.microsoft
// GroupQueryAttention and MultiHeadAttention): a query row's dot with a key, and the softmax of
// a row's scores weighing the values into the output row. Plain float loops in onnxruntime's
// order of operations; 16-bit keys and values widened as read, the output rounded once.
//
//   scores[j] = row_dot(q, keys + j * head, head) * scale;          // for j in [from, to)
//   softmax_weigh(scores, from, to, best, 0.0F, values, width, acc, y_row);
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "float16.hpp"

namespace footprint::runtime::kernels {

template <class T>
float row_dot(const float* q, const T* k, int64_t n) {
  float dot = 0;
  for (int64_t c = 0; c < n; ++c) dot += q[c] * static_cast<float>(widen(k[c]));
  return dot;
}

// scores[from, to) (their largest `best`) made a softmax whose denominator starts at `sum` (0, or
// a smooth softmax's exp(-best)), then y = sum_j w_j values[j] (rows `width` apart) through
// the float accumulator `acc`.
template <class T>
void softmax_weigh(float* scores, int64_t from, int64_t to, float best, float sum, const T* values,
                   int64_t width, float* acc, T* y) {
  for (int64_t j = from; j < to; ++j) {
    scores[j] = std::exp(scores[j] - best);
    sum += scores[j];
  }
  const float inv = 1.0F / sum;
  std::fill(acc, acc + width, 0.0F);
  for (int64_t j = from; j < to; ++j) {
    const float w = scores[j] * inv;
    const T* v = values + j * width;
    for (int64_t c = 0; c < width; ++c) acc[c] += w * static_cast<float>(widen(v[c]));
  }
  for (int64_t c = 0; c < width; ++c) y[c] = narrow<T>(acc[c]);
}

}  // namespace footprint::runtime::kernels
