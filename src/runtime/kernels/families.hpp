#pragma once
// Each kernel family fills its ops' rows of the runtime's registry (kernel, prepare, workspace,
// in_place). A family's file mirrors the graph layer's: src/runtime/kernels/X.cpp runs the ops
// whose rows and inference src/graph/ops/X.cpp adds. Families without kernels yet (losses,
// signal) have no file here; blocked_layout and depthwise_conv are helpers of conv_pool.
#include "footprint/graph/op_registry.hpp"

namespace footprint::runtime::kernels {

void register_elementwise(graph::OpRegistry& r);
// footprint::Elementwise, a row of the elementwise family (graph/ops/elementwise.cpp), in
// elementwise_program.cpp.
void register_elementwise_program(graph::OpRegistry& r);
void register_reduce(graph::OpRegistry& r);
void register_conv_pool(graph::OpRegistry& r);
void register_col2im(graph::OpRegistry& r);
void register_signal(graph::OpRegistry& r);
void register_center_crop_pad(graph::OpRegistry& r);
void register_affine_grid(graph::OpRegistry& r);
void register_det(graph::OpRegistry& r);
// footprint::SqueezeExcite, a row of the conv_pool family (graph/ops/conv_pool.cpp), in
// squeeze_excite.cpp.
void register_squeeze_excite(graph::OpRegistry& r);
void register_matmul(graph::OpRegistry& r);
// footprint::Attention, a row of the matmul family (graph/ops/matmul.cpp), in attention.cpp.
void register_attention(graph::OpRegistry& r);
// Attention of opset 23 (graph/ops/attention.cpp), in onnx_attention.cpp.
void register_onnx_attention(graph::OpRegistry& r);
// com.microsoft's SkipLayerNormalization, BiasGelu, FastGelu, ... (graph/ops/
// contrib_transformer.cpp), in contrib_transformer.cpp.
void register_contrib_transformer(graph::OpRegistry& r);
// com.microsoft GroupQueryAttention (graph/ops/contrib_transformer.cpp), in
// group_query_attention.cpp.
void register_group_query_attention(graph::OpRegistry& r);
// com.microsoft MultiHeadAttention (graph/ops/contrib_transformer.cpp), in
// multihead_attention.cpp.
void register_multihead_attention(graph::OpRegistry& r);
// Einsum (graph/ops/matmul.cpp), in einsum.cpp.
void register_einsum(graph::OpRegistry& r);
// GridSample (graph/ops/detection.cpp), in grid_sample.cpp.
void register_grid_sample(graph::OpRegistry& r);
// DFT and STFT (graph/ops/signal.cpp), in dft.cpp.
void register_dft(graph::OpRegistry& r);
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (graph/ops/losses.cpp), in losses.cpp.
void register_losses(graph::OpRegistry& r);
// MelWeightMatrix and MeanVarianceNormalization, in audio_norm.cpp.
void register_audio_norm(graph::OpRegistry& r);
void register_integer_products(graph::OpRegistry& r);
// com.microsoft MatMulNBits, a row of the matmul family (graph/ops/matmul.cpp), in
// matmul_nbits.cpp.
void register_matmul_nbits(graph::OpRegistry& r);
void register_normalization(graph::OpRegistry& r);
void register_rotary(graph::OpRegistry& r);
void register_reshape(graph::OpRegistry& r);
void register_indexing(graph::OpRegistry& r);
void register_resize(graph::OpRegistry& r);
void register_generators(graph::OpRegistry& r);
void register_recurrent(graph::OpRegistry& r);
void register_control_flow(graph::OpRegistry& r);
void register_detection(graph::OpRegistry& r);
void register_quantization(graph::OpRegistry& r);
// com.microsoft's QLinear element, pool and concat ops (QLinearAdd, ..., QLinearConcat), rows of
// the elementwise, conv_pool and indexing families, in qlinear.cpp.
void register_qlinear(graph::OpRegistry& r);

}  // namespace footprint::runtime::kernels
