#pragma once
// Helpers the per-family inference hooks share: schema rows, axes, broadcasting, output setters
// and element-level work on small known values.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "footprint/graph/graph.hpp"
#include "footprint/graph/inference.hpp"
#include "footprint/graph/op_registry.hpp"

namespace footprint::graph::ops {

constexpr int V = OpSchema::kVariadic;

// One registry row: arity and the inference hook.
OpSchema op(std::string_view name, int min_in, int max_in, InferFn infer, int min_out = 1,
            int max_out = 1);
// The domain of onnxruntime's contrib ops (its quantizer's QLinearAdd, QGemm, MatMulNBits, ...).
constexpr std::string_view kMicrosoftDomain = "com.microsoft";
// `row` in that domain. Such a row sits beside the ONNX op whose shapes it has, and infers through
// that op's inference on the inputs it shares (with_inputs).
OpSchema contrib(OpSchema row);
// The context another row's inference sees when it reads inputs `which` of this node alone, in
// that order (QLinearAveragePool's X is AveragePool's input 0); the node and its attributes are
// the same.
InferContext with_inputs(const InferContext& ctx, const std::vector<size_t>& which);
// A row whose output 0 aliases input 0 (allocates nothing).
OpSchema view(std::string_view name, int min_in, int max_in, InferFn infer);

// ---- Output setters (indices past the node's outputs are ignored: optional outputs).

void set_output(InferResult& r, size_t i, DType dtype, Shape shape);
// Records a known value when it is small enough, and sets the output's type from it.
void set_value(InferResult& r, size_t i, KnownValue v);
// Output 0 has input 0's dtype and shape (elementwise unary ops, normalisations, ...).
void same_as_input(const InferContext& ctx, InferResult& r, size_t out = 0, size_t in = 0);

// ---- Shapes

Shape ranked(std::vector<Dim> dims);
// An unranked shape when `rank` is unknown, else `rank` unknown dims.
Shape unknown_dims(size_t rank);
// A rank-4 shape's axes [N, C, H, W] as channels-last [N, H, W, C] (graph::to_channels_last's
// layout), and back; any other shape as it is.
Shape channels_last(Shape s);
Shape channels_first(Shape s);
// The inference `infer` of an op run on channels-last tensors (a row of domain "footprint"):
// its first `inputs` inputs seen as NCHW, its outputs made channels-last again.
void infer_channels_last(const InferContext& ctx, InferResult& r, InferFn infer, size_t inputs);
// The same where the channels-last inputs are first, first + step, ... to the last.
void infer_channels_last(const InferContext& ctx, InferResult& r, InferFn infer, size_t first,
                         size_t step);
// An extent known only when running, at most `bound` (Dim::bounded). Its origin names the node
// and `part` ("axis 1"), so analysis can say which op bounds a figure, and two such extents of
// one node stay distinct.
Dim data_dependent(const InferContext& ctx, const Dim& bound, std::string_view part = {});
// `axis` in [-rank, rank) made non-negative; fails otherwise.
size_t normalize_axis(const InferContext& ctx, int64_t axis, size_t rank);
std::vector<size_t> normalize_axes(const InferContext& ctx, const std::vector<int64_t>& axes,
                                   size_t rank);
// Multidirectional (numpy) broadcasting; fails on two known extents that differ and are not 1.
Dim broadcast_dim(const InferContext& ctx, const Dim& a, const Dim& b);
Shape broadcast(const InferContext& ctx, const std::vector<const Shape*>& shapes);
// The known integer elements of input i, or else of the ints attribute `attr`.
std::optional<std::vector<int64_t>> ints_from_input_or_attr(const InferContext& ctx, size_t input,
                                                            std::string_view attr);
// A 1-D known tensor of dims (possibly symbolic) as a shape's extents; nullopt when not known.
std::optional<std::vector<Dim>> dims_from_value(const KnownValue* v);

// ---- Products: the output extents the integer products share with MatMul and Conv
// MatMul's [..., M, K] x [..., K, N] (1-D operands promoted, batch dims broadcast; matmul.cpp).
Shape matmul_shape(const InferContext& ctx, const Shape& a, const Shape& b);
// Conv's [N, C, D...] x weights [M, C/group, k...] -> [N, M, out...] as output 0 (conv_pool.cpp).
void conv_shape(const InferContext& ctx, InferResult& r, size_t x_index, size_t w_index,
                DType dtype);

// ---- Known values

KnownValue known_ints(DType dtype, std::vector<int64_t> dims, std::vector<Dim> ints);
KnownValue known_reals(DType dtype, std::vector<int64_t> dims, std::vector<double> reals);
// Row-major strides of a static shape.
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims);
// For each element of a tensor of shape `out` (row-major), the flat index of the element of a
// tensor of shape `in` that broadcasting reads there; nullopt when `in` does not broadcast.
std::optional<std::vector<int64_t>> broadcast_indices(const std::vector<int64_t>& out,
                                                      const std::vector<int64_t>& in);
// The numpy broadcast of static shapes; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> broadcast_static(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b);
// The elements of `src` at the given flat indices, as a tensor of shape `dims`.
KnownValue pick(const KnownValue& src, std::vector<int64_t> dims, const std::vector<int64_t>& flat);
// Every element of `v` converted to `to` (integers truncate reals; bool is != 0); nullopt when a
// symbolic integer would have to become a real.
std::optional<KnownValue> cast_value(const KnownValue& v, DType to);
// x rounded to the nearest value of the floating-point type t (float16, bfloat16, float32).
double round_to(DType t, double x);
// Floats value propagation computes with (float16, bfloat16, float32, float64: the float8 and
// 4-bit types have no scalar reader), and the integer types with bool (not the packed ones).
bool is_real(DType t);
bool is_integral(DType t);

}  // namespace footprint::graph::ops
