#pragma once
// A tensor's payload in its natural little-endian element layout.
//
// raw_data, external data and packed float/double fields are handed out as views of the model's
// bytes. Fields ONNX stores as varints (int32_data, int64_data, uint64_data) and views that do
// not meet a requested alignment are decoded or copied into memory from the given resource, so
// every copy is visible to whoever counts that resource.
//
//   TensorBytes w = tensor_bytes(init, /*alignment=*/64, &counter);
//   if (!w.is_view()) ...;  // a copy was made and counted
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <span>

#include "footprint/core/dtype.hpp"
#include "footprint/onnx/proto.hpp"

namespace footprint::onnx {

class TensorBytes {
 public:
  TensorBytes() = default;
  explicit TensorBytes(std::span<const std::byte> view) : view_(view) {}
  // Storage of `size` bytes at `alignment` from `memory`, released with it.
  TensorBytes(size_t size, size_t alignment, std::pmr::memory_resource* memory);
  TensorBytes(TensorBytes&& other) noexcept;
  TensorBytes& operator=(TensorBytes&& other) noexcept;
  TensorBytes(const TensorBytes&) = delete;
  TensorBytes& operator=(const TensorBytes&) = delete;
  ~TensorBytes() { release(); }

  std::span<const std::byte> bytes() const { return view_; }
  std::span<std::byte> writable() { return {owned_, owned_ != nullptr ? view_.size() : 0}; }
  size_t size() const { return view_.size(); }
  bool is_view() const { return owned_ == nullptr && !view_.empty(); }

 private:
  void release();

  std::span<const std::byte> view_;
  std::byte* owned_ = nullptr;
  size_t alignment_ = 0;
  std::pmr::memory_resource* memory_ = nullptr;
};

DType tensor_dtype(const TensorProto& t);
// numel x element size (packed sub-byte types rounded up); 0 for string tensors.
uint64_t tensor_storage_bytes(const TensorProto& t);
// Where a tensor's bytes live without decoding: raw_data, external data, or one packed run of a
// float/double field. Empty when the payload must be decoded.
std::span<const std::byte> tensor_view(const TensorProto& t);

// The natural alignment of a dtype's elements: kernels read weights through typed pointers.
size_t element_alignment(DType t);
// Whether tensor_bytes(t, alignment) views the payload where it lies rather than copying it (an
// empty payload needs neither).
bool readable_in_place(const TensorProto& t, size_t alignment);

// The payload, as a view when possible and aligned to `alignment` (a power of two), otherwise
// decoded or copied into memory from `memory`.
TensorBytes tensor_bytes(const TensorProto& t, size_t alignment = 1,
                         std::pmr::memory_resource* memory = nullptr);

}  // namespace footprint::onnx
