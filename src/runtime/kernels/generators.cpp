#include "families.hpp"

namespace footprint::runtime::kernels {

void register_generators(graph::OpRegistry& r) {
  (void)r;
}

}  // namespace footprint::runtime::kernels
