#include "footprint/onnx/tensor_data.hpp"

#include <cstring>
#include <utility>

#include "footprint/core/shape.hpp"

namespace footprint::onnx {

TensorBytes::TensorBytes(size_t size, size_t alignment, std::pmr::memory_resource* memory)
    : owned_(static_cast<std::byte*>(memory->allocate(size, alignment))),
      alignment_(alignment),
      memory_(memory) {
  view_ = {owned_, size};
}

TensorBytes::TensorBytes(TensorBytes&& other) noexcept
    : view_(std::exchange(other.view_, {})),
      owned_(std::exchange(other.owned_, nullptr)),
      alignment_(other.alignment_),
      memory_(other.memory_) {}

TensorBytes& TensorBytes::operator=(TensorBytes&& other) noexcept {
  if (this != &other) {
    release();
    view_ = std::exchange(other.view_, {});
    owned_ = std::exchange(other.owned_, nullptr);
    alignment_ = other.alignment_;
    memory_ = other.memory_;
  }
  return *this;
}

void TensorBytes::release() {
  if (owned_ != nullptr) memory_->deallocate(owned_, view_.size(), alignment_);
  owned_ = nullptr;
  view_ = {};
}

DType tensor_dtype(const TensorProto& t) {
  return static_cast<DType>(t.data_type);
}

uint64_t tensor_storage_bytes(const TensorProto& t) {
  const auto numel = dims_numel(t.dims);
  if (!numel) return 0;
  return dtype_storage_bytes(tensor_dtype(t), *numel).value_or(0);
}

std::span<const std::byte> tensor_view(const TensorProto& t) {
  if (t.data_location == TensorProto::Location::external) return t.external_bytes;
  if (t.has_raw_data) return t.raw_data;
  if (const auto run = t.typed_data.packed_fixed(); !run.empty()) return run;
  return {};
}

namespace {

// Decodes the varint-encoded typed fields into element bytes.
void decode_typed(const TensorProto& t, std::span<std::byte> out) {
  const DType dtype = tensor_dtype(t);
  int width = dtype_bits(dtype) / 8;
  if (width == 0) width = 1;  // 4-bit types: one int32_data value per packed byte
  const bool fixed = t.typed_data.kind != ScalarKind::varint;
  size_t pos = 0;
  t.typed_data.for_each([&](uint64_t v) {
    if (fixed) {
      // Unpacked or split fixed-width values: the bits are already the element.
      const int w = t.typed_data.kind == ScalarKind::fixed32 ? 4 : 8;
      if (pos + w <= out.size()) std::memcpy(out.data() + pos, &v, w);
      pos += w;
      return;
    }
    if (pos + width <= out.size()) std::memcpy(out.data() + pos, &v, width);
    pos += width;
  });
}

}  // namespace

size_t element_alignment(DType t) {
  const int bits = dtype_bits(t);
  return bits >= 8 ? static_cast<size_t>(bits / 8) : 1;
}

bool readable_in_place(const TensorProto& t, size_t alignment) {
  const std::span<const std::byte> view = tensor_view(t);
  return !view.empty() &&
         (alignment <= 1 || reinterpret_cast<uintptr_t>(view.data()) % alignment == 0);
}

TensorBytes tensor_bytes(const TensorProto& t, size_t alignment,
                         std::pmr::memory_resource* memory) {
  if (memory == nullptr) memory = std::pmr::get_default_resource();
  const uint64_t size = tensor_storage_bytes(t);
  std::span<const std::byte> view = tensor_view(t);
  if (size == 0) return TensorBytes{};
  if (readable_in_place(t, alignment)) return TensorBytes(view);

  TensorBytes owned(size, alignment < 16 ? 16 : alignment, memory);
  if (!view.empty()) {
    std::memcpy(owned.writable().data(), view.data(), size);
  } else {
    decode_typed(t, owned.writable());
  }
  return owned;
}

}  // namespace footprint::onnx
