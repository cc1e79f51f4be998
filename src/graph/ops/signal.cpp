// Signal processing (opsets 17 and 20): window generators, MelWeightMatrix, DFT and STFT. Their
// sizes come from scalar inputs, known when those are constants.
#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

// The single element of input i as a dim (possibly symbolic); unknown when not known.
Dim scalar_dim(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return Dim::unknown();
  const KnownValue* v = ctx.value(i);
  if (v == nullptr || v->numel() != 1 || !v->is_integer()) return Dim::unknown();
  return v->ints[0];
}

DType output_datatype(const InferContext& ctx) {
  return static_cast<DType>(ctx.attr_int("output_datatype", static_cast<int64_t>(DType::float32)));
}

// HannWindow / HammingWindow / BlackmanWindow(size) -> [size].
void infer_window(const InferContext& ctx, InferResult& r) {
  set_output(r, 0, output_datatype(ctx), ranked({scalar_dim(ctx, 0)}));
}

// MelWeightMatrix(num_mel_bins, dft_length, ...) -> [floor(dft_length / 2) + 1, num_mel_bins].
void infer_mel_weight_matrix(const InferContext& ctx, InferResult& r) {
  const Dim bins = floor_div(scalar_dim(ctx, 1), Dim::known(2)) + Dim::known(1);
  set_output(r, 0, output_datatype(ctx), ranked({bins, scalar_dim(ctx, 0)}));
}

// DFT(input [batch, n..., 1 or 2], dft_length, axis): the axis becomes dft_length (halved plus
// one when onesided) and the last dim holds real and imaginary parts. Opset 20 made the axis an
// input (default -2, the last signal axis; before, an attribute, default 1) and gave onesided
// inverse transforms (IRFFT) a real output of dft_length along the axis.
void infer_dft(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  if (!x.shape.ranked || x.shape.rank() < 3) {
    set_output(r, 0, x.dtype, x.shape.ranked ? unknown_dims(x.shape.rank()) : Shape::unranked());
    return;
  }
  std::vector<Dim> dims = x.shape.dims;
  const size_t rank = dims.size();
  int64_t axis = ctx.attr_int("axis", 1);
  if (ctx.opset >= 20) {
    axis = -2;
    if (ctx.has_input(2)) {
      const auto given = ctx.input_ints(2);
      if (!given || given->size() != 1) {  // an axis known only when running
        set_output(r, 0, x.dtype, unknown_dims(rank));
        return;
      }
      axis = (*given)[0];
    }
  }
  const size_t a = normalize_axis(ctx, axis, rank);
  if (a == rank - 1) ctx.fail("the last axis holds real and imaginary parts; it is no DFT axis");
  Dim n = ctx.has_input(1) ? scalar_dim(ctx, 1) : dims[a];
  const bool onesided = ctx.attr_int("onesided", 0) != 0;
  const bool inverse = ctx.attr_int("inverse", 0) != 0;
  if (onesided && inverse && ctx.opset >= 20) {
    dims[a] = n;
    dims.back() = Dim::known(1);
  } else {
    dims[a] = onesided ? floor_div(n, Dim::known(2)) + Dim::known(1) : n;
    dims.back() = Dim::known(2);
  }
  set_output(r, 0, x.dtype, ranked(std::move(dims)));
}

// STFT(signal [batch, length, 1 or 2], frame_step, window, frame_length)
//   -> [batch, frames, bins, 2].
void infer_stft(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const bool shaped = x.shape.ranked && x.shape.rank() == 3;
  Dim frame_length = scalar_dim(ctx, 3);
  if (frame_length.is_unknown() && ctx.has_input(2)) {
    const Shape& w = ctx.input(2).shape;
    if (w.ranked && w.rank() == 1) frame_length = w.dims[0];
  }
  const Dim length = shaped ? x.shape.dims[1] : Dim::unknown();
  const Dim frames = floor_div(length - frame_length, scalar_dim(ctx, 1)) + Dim::known(1);
  const Dim bins = ctx.attr_int("onesided", 1) != 0
                       ? floor_div(frame_length, Dim::known(2)) + Dim::known(1)
                       : frame_length;
  set_output(r, 0, x.dtype,
             ranked({shaped ? x.shape.dims[0] : Dim::unknown(), frames, bins, Dim::known(2)}));
}

}  // namespace

void register_signal(OpRegistry& r) {
  r.add(op("HannWindow", 1, 1, infer_window));
  r.add(op("HammingWindow", 1, 1, infer_window));
  r.add(op("BlackmanWindow", 1, 1, infer_window));
  r.add(op("MelWeightMatrix", 5, 5, infer_mel_weight_matrix));
  r.add(op("DFT", 1, 3, infer_dft));
  r.add(op("STFT", 2, 4, infer_stft));
}

}  // namespace footprint::graph::ops
