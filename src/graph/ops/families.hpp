#pragma once
// The op families: each file under src/graph/ops/ adds its ops (arity, view and in-place
// semantics, inference hook) to the registry.
#include "footprint/graph/op_registry.hpp"

namespace footprint::graph::ops {

void register_elementwise(OpRegistry& r);    // unary, binary with broadcasting, variadic, Where
void register_conv_pool(OpRegistry& r);      // Conv*, pools, LRN
void register_matmul(OpRegistry& r);         // Gemm, MatMul*, Einsum
void register_normalization(OpRegistry& r);  // *Normalization, Softmax family, Dropout
void register_reduce(OpRegistry& r);         // Reduce*, ArgMax/ArgMin, CumSum, TopK
void register_reshape(OpRegistry& r);        // Reshape, Flatten, (Un)squeeze, Transpose, ...
void register_indexing(OpRegistry& r);       // Concat, Split, Slice, Gather*, Scatter*, Pad, ...
void register_generators(OpRegistry& r);     // Constant*, Shape, Size, Range, EyeLike, OneHot
void register_resize(OpRegistry& r);         // Resize, Upsample
void register_quantization(OpRegistry& r);   // QuantizeLinear, DequantizeLinear, ...
void register_recurrent(OpRegistry& r);      // LSTM, GRU, RNN
void register_control_flow(OpRegistry& r);   // If, Loop, Scan
void register_sequences(OpRegistry& r);      // sequence ops as graph::lower_sequences lowers them
void register_detection(OpRegistry& r);      // NonMaxSuppression, RoiAlign, GridSample
void register_losses(OpRegistry& r);         // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void register_signal(OpRegistry& r);         // windows, MelWeightMatrix, DFT, STFT
void register_rotary(OpRegistry& r);         // RotaryEmbedding
void register_attention(OpRegistry& r);      // Attention (opset 23)
// com.microsoft SkipLayerNormalization, BiasGelu, FastGelu, ...; SimplifiedLayerNormalization
void register_contrib_transformer(OpRegistry& r);
// MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv
void register_integer_products(OpRegistry& r);

}  // namespace footprint::graph::ops
