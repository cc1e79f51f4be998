#include "families.hpp"

namespace footprint::runtime::kernels {

void register_conv_pool(graph::OpRegistry& r) {
  (void)r;
}

}  // namespace footprint::runtime::kernels
