#include "footprint/runtime/op_kernels.hpp"

#include <omp.h>

#include "kernels/families.hpp"

namespace footprint::runtime {

const graph::OpRegistry& op_registry() {
  // A copy of the builtin rows with the runtime's hooks filled; built once, never changed after.
  static const graph::OpRegistry registry = [] {
    graph::OpRegistry r = graph::OpRegistry::builtin();
    kernels::register_elementwise(r);
    kernels::register_reduce(r);
    kernels::register_conv_pool(r);
    kernels::register_matmul(r);
    kernels::register_normalization(r);
    kernels::register_data_movement(r);
    kernels::register_resize(r);
    kernels::register_generators(r);
    kernels::register_recurrent(r);
    kernels::register_control_flow(r);
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

}  // namespace footprint::runtime
