#include "families.hpp"

namespace footprint::runtime::kernels {

void register_data_movement(graph::OpRegistry& r) {
  (void)r;
}

}  // namespace footprint::runtime::kernels
