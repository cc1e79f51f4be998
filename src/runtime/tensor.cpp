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

void AlignedBuffer::Free::operator()(std::byte* p) const {
  std::free(p);
}

Tensor::Tensor(std::string name, DType dtype, std::vector<int64_t> dims)
    : name_(std::move(name)), dtype_(dtype), dims_(std::move(dims)) {
  const auto n = checked_numel(dims_.data(), dims_.size());
  const auto bytes = n ? dtype_storage_bytes(dtype_, *n) : std::nullopt;
  if (!bytes || dtype_ == DType::string || dtype_ == DType::undefined) {
    throw Error("tensor " + in_quotes(name_) + ": " + std::string(dtype_name(dtype_)) +
                " tensors of these extents cannot be held");
  }
  storage_ = AlignedBuffer(*bytes);
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
