#pragma once
// Dot products of a matrix's rows with one float vector, y[i] = W[i, :] . x: the small products of
// a squeeze-and-excitation block and a classifier's head on one image, where each weight is read
// once per run and the time is the weights' bytes and the sums' latency.
//
//   row_dots(w, cols, x, y, cols, rows);   // W float, Float16 or BFloat16, [rows][stride]
//
// Several rows are summed at once (their sums in flight together), each row in the same order
// whatever the rows beside it: a vector of the widest lanes the CPU has accumulates the columns a
// vector at a time (fused multiply-adds where the CPU has them), its lanes are added first to
// last, then the last columns one by one. 16-bit weights are widened in registers as they are
// loaded (exact), so a 16-bit row's sum is the one its float copy would give, without the copy.
#include <cstddef>

#include "float16.hpp"

namespace footprint::runtime::kernels {

void row_dots(const float* w, size_t stride, const float* x, float* y, size_t cols, size_t rows);
void row_dots(const Float16* w, size_t stride, const float* x, float* y, size_t cols, size_t rows);
void row_dots(const BFloat16* w, size_t stride, const float* x, float* y, size_t cols, size_t rows);

}  // namespace footprint::runtime::kernels
