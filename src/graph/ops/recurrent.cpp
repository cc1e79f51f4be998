// Recurrent layers: LSTM (Y, Y_h, Y_c), GRU and RNN (Y, Y_h).
//
// With layout 0, X is [seq, batch, input], Y is [seq, num_directions, batch, hidden] and the
// states are [num_directions, batch, hidden]; layout 1 (opset 14) puts batch first in all three.
#include "families.hpp"
#include "infer_util.hpp"

namespace footprint::graph::ops {
namespace {

void infer_recurrent(const InferContext& ctx, InferResult& r) {
  const TensorType& x = ctx.input(0);
  const bool batch_first = ctx.attr_int("layout", 0) != 0;
  const Dim seq =
      x.shape.ranked && x.shape.rank() == 3 ? x.shape.dims[batch_first ? 1 : 0] : Dim::unknown();
  const Dim batch =
      x.shape.ranked && x.shape.rank() == 3 ? x.shape.dims[batch_first ? 0 : 1] : Dim::unknown();
  const Dim directions =
      Dim::known(ctx.attr_string("direction", "forward") == "bidirectional" ? 2 : 1);
  Dim hidden = Dim::unknown();
  if (const auto* h = ctx.attribute("hidden_size")) {
    hidden = Dim::known(h->i);
  } else if (const Shape& rec = ctx.input(2).shape; rec.ranked && rec.rank() == 3) {
    hidden = rec.dims[2];  // R is [num_directions, gates * hidden, hidden]
  }
  set_output(r, 0, x.dtype,
             batch_first ? ranked({batch, seq, directions, hidden})
                         : ranked({seq, directions, batch, hidden}));
  const Shape state =
      batch_first ? ranked({batch, directions, hidden}) : ranked({directions, batch, hidden});
  set_output(r, 1, x.dtype, state);
  set_output(r, 2, x.dtype, state);
}

}  // namespace

void register_recurrent(OpRegistry& r) {
  r.add(op("LSTM", 3, 8, infer_recurrent, 0, 3));
  r.add(op("GRU", 3, 6, infer_recurrent, 0, 2));
  r.add(op("RNN", 3, 6, infer_recurrent, 0, 2));
}

}  // namespace footprint::graph::ops
