#include "footprint/runtime/tensor.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "footprint/core/bump_arena.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/tensor_file.hpp"

namespace footprint::runtime {

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<std::byte*>(p));
}

AlignedBuffer AlignedBuffer::borrow(std::byte* data, size_t bytes) {
  AlignedBuffer b;
  b.data_ = std::unique_ptr<std::byte, Free>(data, Free{.owned = false});
  b.size_ = bytes;
  return b;
}

void AlignedFree::operator()(std::byte* p) const {
  if (owned) std::free(p);
}

namespace {

// The bytes of dtype x dims; footprint::Error naming the tensor when they cannot be held.
size_t storage_bytes(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
  const auto n = checked_numel(dims.data(), dims.size());
  const auto bytes = n ? dtype_storage_bytes(dtype, *n) : std::nullopt;
  if (!bytes || dtype == DType::string || dtype == DType::undefined) {
    throw Error("tensor " + in_quotes(name) + ": " + std::string(dtype_name(dtype)) +
                " tensors of these extents cannot be held");
  }
  return *bytes;
}

}  // namespace

Tensor::Tensor(std::string name, DType dtype, std::vector<int64_t> dims)
    : name_(std::move(name)), dtype_(dtype), dims_(std::move(dims)) {
  storage_ = AlignedBuffer(storage_bytes(name_, dtype_, dims_));
}

Tensor Tensor::view(std::string name, DType dtype, std::vector<int64_t> dims, std::byte* data) {
  Tensor t;
  t.storage_ = AlignedBuffer::borrow(data, storage_bytes(name, dtype, dims));
  t.name_ = std::move(name);
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  return t;
}

size_t Tensor::numel() const {
  size_t n = 1;
  for (int64_t d : dims_) n *= static_cast<size_t>(d);
  return n;
}

Tensor tensor_from_proto(const onnx::TensorProto& proto) {
  std::vector<int64_t> dims;
  dims.reserve(proto.dims.count);
  for (int64_t d : proto.dims) dims.push_back(d);
  Tensor t(std::string(proto.name), onnx::tensor_dtype(proto), std::move(dims));
  const onnx::TensorBytes payload = onnx::tensor_bytes(proto);
  if (payload.size() != t.bytes()) {
    throw Error("tensor " + in_quotes(t.name()) + ": payload holds " +
                std::to_string(payload.size()) + " bytes, its extents need " +
                std::to_string(t.bytes()));
  }
  if (t.bytes() > 0) std::memcpy(t.data(), payload.bytes().data(), t.bytes());
  return t;
}

Tensor read_tensor_file(const std::filesystem::path& path) {
  const auto file = onnx::TensorFile::load_file(path);
  try {
    return tensor_from_proto(file.tensor());
  } catch (const Error& e) {
    throw Error(path.string() + ": " + e.what());
  }
}

void write_tensor_file(const std::filesystem::path& path, const Tensor& tensor) {
  BumpArena arena;
  const onnx::TensorProto proto =
      onnx::make_tensor_view(arena, tensor.name(), tensor.dtype(), tensor.dims(),
                             std::span<const std::byte>(tensor.data(), tensor.bytes()));
  onnx::write_tensor_file(path, proto);
}

}  // namespace footprint::runtime
