#pragma once
// The op registry with kernels: the builtin rows (semantics, inference) plus, for every op the
// runtime can execute, its kernel, its prepare hook and its workspace size. Graphs the runtime
// runs are built against it, so analysis sees the same workspace the executor will use.
//
//   const graph::OpRegistry& ops = runtime::op_registry();
//   auto g = graph::Graph::from_onnx(model, ops);
//   g.node(0).schema->kernel != nullptr;  // executable
#include "footprint/graph/op_registry.hpp"

namespace footprint::runtime {

const graph::OpRegistry& op_registry();

// The intra-op thread count (OpenMP) kernels are built and run with. oneDNN sizes a primitive's
// scratch for the threads in effect when it is built, so analysis sets it as the run will.
void set_intra_op_threads(int threads);

// Whether the runtime can execute the op: it has a kernel or is a view.
bool is_executable(const graph::OpSchema& schema);

// Whether the op's kernel is the registry's view copy, which writes nothing when the output
// already is its input: such a step is skipped then. A view with a kernel of its own (Dropout
// fills a mask and checks its training switch) always runs it.
bool runs_as_view_copy(const graph::OpSchema& schema);

}  // namespace footprint::runtime
