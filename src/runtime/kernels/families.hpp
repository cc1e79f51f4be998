#pragma once
// Each kernel family fills its ops' rows of the runtime's registry (kernel, prepare, workspace).
#include "footprint/graph/op_registry.hpp"

namespace footprint::runtime::kernels {

void register_elementwise(graph::OpRegistry& r);
void register_reduce(graph::OpRegistry& r);
void register_conv_pool(graph::OpRegistry& r);
void register_matmul(graph::OpRegistry& r);
void register_normalization(graph::OpRegistry& r);
void register_data_movement(graph::OpRegistry& r);
void register_resize(graph::OpRegistry& r);
void register_generators(graph::OpRegistry& r);
void register_recurrent(graph::OpRegistry& r);
void register_control_flow(graph::OpRegistry& r);

}  // namespace footprint::runtime::kernels
