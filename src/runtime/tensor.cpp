#include "footprint/runtime/tensor.hpp"

#include <sys/sysinfo.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "footprint/core/bump_arena.hpp"
#include "footprint/core/checked_math.hpp"
#include "footprint/core/error.hpp"
#include "footprint/core/shape.hpp"
#include "footprint/graph/lower_sequences.hpp"
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
  if (dtype == DType::string || dtype == DType::undefined) {
    throw Error("tensor " + in_quotes(name) + ": " + std::string(dtype_name(dtype)) +
                " elements have no fixed size; footprint's runtime holds numeric tensors only");
  }
  const auto n = checked_numel(dims.data(), dims.size());
  const auto bytes = n ? dtype_storage_bytes(dtype, *n) : std::nullopt;
  if (!bytes) {
    throw SizeOverflow("tensor " + in_quotes(name) + ": the bytes of " +
                       std::string(dtype_name(dtype)) + Shape::of(dims).to_string() +
                       " do not fit 64 bits (or an extent is negative)");
  }
  return *bytes;
}

}  // namespace

Tensor::Tensor(std::string name, DType dtype, std::vector<int64_t> dims)
    : name_(std::move(name)), dtype_(dtype), dims_(std::move(dims)) {
  const size_t bytes = storage_bytes(name_, dtype_, dims_);
  try {
    storage_ = AlignedBuffer(bytes);
  } catch (const std::bad_alloc&) {
    throw Error("tensor " + in_quotes(name_) + ": out of memory allocating " +
                std::to_string(bytes) + " bytes");
  } catch (const Error& e) {
    throw Error("tensor " + in_quotes(name_) + ": " + e.what());
  }
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

std::vector<Tensor> read_value_file(const std::filesystem::path& path, std::string_view kind,
                                    const std::string& name) {
  std::vector<Tensor> out;
  if (kind.empty()) {
    out.push_back(read_tensor_file(path));
    return out;
  }
  if (kind != "sequence" && kind != "optional") {
    throw Error(path.string() + ": " + in_quotes(name) + " is declared a " + std::string(kind) +
                ", which footprint does not read");
  }
  const auto file = onnx::TensorFile::load_value(
      onnx::ModelSource::map_file(path), kind == "sequence" ? onnx::ValueFileProto::Kind::sequence
                                                            : onnx::ValueFileProto::Kind::optional);
  const onnx::ValueFileProto& value = *file.value();
  out.reserve(value.tensors.size());
  const bool elements = value.kind == onnx::ValueFileProto::Kind::sequence || value.holds_sequence;
  size_t i = 0;
  for (const onnx::TensorProto& proto : value.tensors) {
    try {
      out.push_back(tensor_from_proto(proto));
    } catch (const Error& e) {
      throw Error(path.string() + ": element " + std::to_string(i) + ": " + e.what());
    }
    out.back().set_name(elements ? graph::element_name(name, i) : name);
    ++i;
  }
  return out;
}

std::vector<Tensor> read_value_files(std::span<const std::filesystem::path> files,
                                     std::span<const DeclaredValue> declared) {
  std::vector<Tensor> out;
  for (size_t k = 0; k < files.size(); ++k) {
    const bool known = k < declared.size();
    for (Tensor& t : read_value_file(files[k], known ? declared[k].kind : std::string_view(),
                                     known ? declared[k].name : std::string())) {
      out.push_back(std::move(t));
    }
  }
  return out;
}

void write_tensor_file(const std::filesystem::path& path, const Tensor& tensor) {
  BumpArena arena;
  const onnx::TensorProto proto =
      onnx::make_tensor_view(arena, tensor.name(), tensor.dtype(), tensor.dims(),
                             std::span<const std::byte>(tensor.data(), tensor.bytes()));
  onnx::write_tensor_file(path, proto);
}

}  // namespace footprint::runtime
