#include "footprint/runtime/tensor.hpp"

#include <sys/sysinfo.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "footprint/core/bump_arena.hpp"
#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/tensor_file.hpp"

namespace footprint::runtime {

namespace {

// RAM plus swap. Linux overcommits, so a request far past it may "succeed" and the process is
// killed when the kernels write it; every byte footprint allocates is written, so such a request
// is refused before it is made.
uint64_t memory_limit_bytes() {
  struct sysinfo info {};
  if (::sysinfo(&info) != 0) return UINT64_MAX;
  const uint64_t unit = info.mem_unit == 0 ? 1 : info.mem_unit;
  const auto total = checked_add<uint64_t>(info.totalram, info.totalswap);
  const auto bytes = total ? checked_mul(*total, unit) : std::nullopt;
  return bytes.value_or(UINT64_MAX);
}

}  // namespace

AlignedBuffer::AlignedBuffer(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  const uint64_t limit = memory_limit_bytes();
  const auto rounded = checked_round_up<size_t>(bytes, kAlignment);
  if (!rounded || *rounded > limit) {
    throw Error(std::to_string(bytes) + " bytes cannot be allocated: this machine has " +
                std::to_string(limit) + " bytes of memory and swap");
  }
  void* p = std::aligned_alloc(kAlignment, *rounded);
  if (p == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<std::byte*>(p));
}

void AlignedBuffer::Free::operator()(std::byte* p) const {
  std::free(p);
}

Tensor::Tensor(std::string name, DType dtype, std::vector<int64_t> dims)
    : name_(std::move(name)), dtype_(dtype), dims_(std::move(dims)) {
  if (dtype_ == DType::string || dtype_ == DType::undefined) {
    throw Error("tensor " + in_quotes(name_) + ": " + std::string(dtype_name(dtype_)) +
                " elements have no fixed size; footprint's runtime holds numeric tensors only");
  }
  const auto n = checked_numel(dims_.data(), dims_.size());
  const auto bytes = n ? dtype_storage_bytes(dtype_, *n) : std::nullopt;
  if (!bytes) {
    throw SizeOverflow("tensor " + in_quotes(name_) + ": the bytes of " +
                       std::string(dtype_name(dtype_)) + Shape::of(dims_).to_string() +
                       " do not fit 64 bits (or an extent is negative)");
  }
  try {
    storage_ = AlignedBuffer(*bytes);
  } catch (const std::bad_alloc&) {
    throw Error("tensor " + in_quotes(name_) + ": out of memory allocating " +
                std::to_string(*bytes) + " bytes");
  } catch (const Error& e) {
    throw Error("tensor " + in_quotes(name_) + ": " + e.what());
  }
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
