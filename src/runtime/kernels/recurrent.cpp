#include "families.hpp"

namespace footprint::runtime::kernels {

void register_recurrent(graph::OpRegistry& r) {
  (void)r;
}

}  // namespace footprint::runtime::kernels
