#include "footprint/runtime/op_kernels.hpp"

#include <omp.h>

#include <cstring>

#include "kernels/families.hpp"

namespace footprint::runtime {
namespace {

// A view's output aliases its input and allocates nothing; when the plan gives it a buffer of its
// own (a graph output, an input that must stay), the view runs as this copy. view() rows alias
// input 0.
void copy_view_kernel(graph::KernelContext& ctx) {
  const graph::TensorRef& x = ctx.input(0);
  graph::TensorRef& y = ctx.output(0);
  if (x.data != y.data) std::memcpy(y.data, x.data, x.bytes());
}

// Every view row a family left without a kernel of its own gets the copy: the registry's view
// declaration decides, not a list of op names.
// A view carries whatever it is given: float32 carriers of 16-bit values stay carriers.
void fill_view_kernels(graph::OpRegistry& r) {
  for (const graph::OpSchema& s : r.all()) {
    if (s.output_view_of < 0) continue;
    graph::OpSchema& row = r.row(s.domain, s.op_type);
    row.float32_carriers = graph::Float32Carriers::whole;
    if (s.kernel == nullptr) {
      row.kernel = copy_view_kernel;
      row.kernel_dtypes = DTypeSet::all();  // bytes, copied only where the output is not a view
    }
  }
}

}  // namespace

const graph::OpRegistry& op_registry() {
  // A copy of the builtin rows with the runtime's hooks filled; built once, never changed after.
  static const graph::OpRegistry registry = [] {
    graph::OpRegistry r = graph::OpRegistry::builtin();
    kernels::register_elementwise(r);
    kernels::register_elementwise_program(r);
    kernels::register_reduce(r);
    kernels::register_conv_pool(r);
    kernels::register_col2im(r);
    kernels::register_signal(r);
    kernels::register_center_crop_pad(r);
    kernels::register_affine_grid(r);
    kernels::register_det(r);
    kernels::register_squeeze_excite(r);
    kernels::register_matmul(r);
    kernels::register_attention(r);
    kernels::register_onnx_attention(r);
    kernels::register_contrib_transformer(r);
    kernels::register_group_query_attention(r);
    kernels::register_multihead_attention(r);
    kernels::register_einsum(r);
    kernels::register_grid_sample(r);
    kernels::register_dft(r);
    kernels::register_losses(r);
    kernels::register_audio_norm(r);
    kernels::register_integer_products(r);
    kernels::register_matmul_nbits(r);
    kernels::register_normalization(r);
    kernels::register_rotary(r);
    kernels::register_reshape(r);
    kernels::register_indexing(r);
    kernels::register_resize(r);
    kernels::register_generators(r);
    kernels::register_recurrent(r);
    kernels::register_control_flow(r);
    kernels::register_detection(r);
    kernels::register_quantization(r);
    kernels::register_qlinear(r);
    fill_view_kernels(r);
    return r;
  }();
  return registry;
}

void set_intra_op_threads(int threads) {
  omp_set_num_threads(threads < 1 ? 1 : threads);
}

bool is_executable(const graph::OpSchema& schema) {
  return schema.kernel != nullptr || schema.output_view_of >= 0;
}

bool runs_as_view_copy(const graph::OpSchema& schema) {
  return schema.output_view_of >= 0 && schema.kernel == copy_view_kernel;
}

}  // namespace footprint::runtime
