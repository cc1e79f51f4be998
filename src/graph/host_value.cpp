#include "footprint/graph/host_value.hpp"

#include <cstring>
#include <new>

#include "footprint/core/error.hpp"
#include "footprint/core/shape.hpp"

namespace footprint::graph {
namespace {

constexpr std::align_val_t kAlignment{64};

size_t storage_bytes(DType dtype, const std::vector<int64_t>& dims) {
  const auto numel = checked_numel(dims.data(), dims.size());
  const auto bytes = numel ? dtype_storage_bytes(dtype, *numel) : std::nullopt;
  if (!bytes || dtype == DType::string) {
    throw Error("cannot hold a " + std::string(dtype_name(dtype)) + " tensor of " +
                Shape::of(dims).to_string() + " in host memory");
  }
  return static_cast<size_t>(*bytes);
}

}  // namespace

std::shared_ptr<HostValue> HostValue::make(DType dtype, std::vector<int64_t> dims) {
  std::shared_ptr<HostValue> v(new HostValue());
  v->bytes_ = storage_bytes(dtype, dims);
  v->dtype_ = dtype;
  v->dims_ = std::move(dims);
  // At least one byte, so a value of no elements still has a distinct, non-null address.
  auto* p = static_cast<std::byte*>(::operator new[](v->bytes_ > 0 ? v->bytes_ : 1, kAlignment));
  v->storage_ =
      std::shared_ptr<std::byte>(p, [](std::byte* q) { ::operator delete[](q, kAlignment); });
  return v;
}

std::shared_ptr<HostValue> HostValue::zeros(DType dtype, std::vector<int64_t> dims) {
  auto v = make(dtype, std::move(dims));
  std::memset(v->data(), 0, v->bytes());
  return v;
}

std::shared_ptr<HostValue> HostValue::view(const HostValue& source, std::vector<int64_t> dims) {
  if (storage_bytes(source.dtype_, dims) != source.bytes_) {
    throw Error("a view of " + Shape::of(source.dims_).to_string() + " as " +
                Shape::of(dims).to_string() + " changes the element count");
  }
  std::shared_ptr<HostValue> v(new HostValue());
  v->dtype_ = source.dtype_;
  v->dims_ = std::move(dims);
  v->bytes_ = source.bytes_;
  v->storage_ = source.storage_;
  return v;
}

}  // namespace footprint::graph
