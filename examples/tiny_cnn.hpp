#pragma once
// footprint's own example model: a small digit-classifier-shaped CNN, written from scratch with
// the onnx layer's writer (no file from elsewhere). About 4 kB:
//
//   x: float[N,1,8,8] -> Conv 3x3 (4 ch, pad 1) -> Relu -> MaxPool 2x2 -> Flatten
//     -> Gemm (64 -> 10) -> Softmax -> y: float[N,10]
//
// Weights are seeded pseudo-random values so every build writes the same bytes.
#include <cstddef>
#include <vector>

namespace footprint::examples {

std::vector<std::byte> make_tiny_cnn();

}  // namespace footprint::examples
