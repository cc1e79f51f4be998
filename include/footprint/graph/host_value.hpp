#pragma once
// A tensor value in host memory whose bytes are shared by the handles that hold it: what value
// propagation (graph::GraphBuilder) computes and constant folding produces. Storage is 64-byte
// aligned; a view (Reshape of a known value) shares its source's storage with other extents.
//
//   auto z = graph::HostValue::zeros(DType::float64, {10000});
//   z->span<double>()[0] = 1.0;
//   graph::TensorRef r = z->ref();
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "footprint/core/dtype.hpp"
#include "footprint/graph/kernel.hpp"

namespace footprint::graph {

class HostValue {
 public:
  // Uninitialised storage for dtype x dims. Throws footprint::Error for string dtypes.
  static std::shared_ptr<HostValue> make(DType dtype, std::vector<int64_t> dims);
  static std::shared_ptr<HostValue> zeros(DType dtype, std::vector<int64_t> dims);
  // The same bytes seen with other extents (same element count).
  static std::shared_ptr<HostValue> view(const HostValue& source, std::vector<int64_t> dims);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  size_t bytes() const { return bytes_; }
  std::byte* data() const { return storage_.get(); }
  // A view the kernels understand; valid while this value lives.
  TensorRef ref() const { return {dtype_, dims_, storage_.get()}; }
  template <class T>
  std::span<T> span() const {
    return {reinterpret_cast<T*>(storage_.get()), bytes_ / sizeof(T)};
  }

 private:
  HostValue() = default;
  DType dtype_ = DType::undefined;
  std::vector<int64_t> dims_;
  size_t bytes_ = 0;
  std::shared_ptr<std::byte> storage_;
};

using SharedValue = std::shared_ptr<const HostValue>;

}  // namespace footprint::graph
