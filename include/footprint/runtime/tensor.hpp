#pragma once
// A tensor that owns its elements: what callers pass to the runtime as inputs and get back as
// outputs. Storage is 64-byte aligned and uninitialised until written.
//
//   runtime::Tensor x = runtime::read_tensor_file("input_0.pb");
//   x.ref().span<const float>();
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/core/dtype.hpp"
#include "footprint/graph/kernel.hpp"
#include "footprint/onnx/proto.hpp"

namespace footprint::runtime {

// Frees what AlignedBuffer allocated; leaves borrowed bytes alone. (Outside the class: a nested
// struct's member initializers are not usable in the enclosing class's defaulted constructor.)
struct AlignedFree {
  bool owned = true;
  void operator()(std::byte* p) const;
};

// 64-byte aligned heap bytes, released with the object; or, borrowed, the caller's bytes.
class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t bytes);
  // The caller's bytes, not freed by this object (which must not outlive them).
  static AlignedBuffer borrow(std::byte* data, size_t bytes);
  std::byte* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  using Free = AlignedFree;
  std::unique_ptr<std::byte, Free> data_;
  size_t size_ = 0;
};

class Tensor {
 public:
  Tensor() = default;
  // Storage for dtype x dims, uninitialised. Throws footprint::Error for string dtypes.
  Tensor(std::string name, DType dtype, std::vector<int64_t> dims);
  // A tensor over the caller's elements (dtype x dims bytes at `data`, aligned for the dtype),
  // which must outlive it: an input read in place (the Python package's numpy arrays). A
  // session never writes into its inputs.
  static Tensor view(std::string name, DType dtype, std::vector<int64_t> dims, std::byte* data);

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  size_t numel() const;
  size_t bytes() const { return storage_.size(); }
  std::byte* data() const { return storage_.data(); }
  // A view the kernels understand; valid while this tensor lives.
  graph::TensorRef ref() const { return {dtype_, dims_, storage_.data()}; }

 private:
  std::string name_;
  DType dtype_ = DType::undefined;
  std::vector<int64_t> dims_;
  AlignedBuffer storage_;
};

// A copy of a TensorProto's payload (decoded from whatever field holds it).
Tensor tensor_from_proto(const onnx::TensorProto& proto);
// One serialized TensorProto (the backend tests' input_0.pb); the name comes from the file.
Tensor read_tensor_file(const std::filesystem::path& path);
// The tensors of a backend test's .pb of the graph input or output `name`, which the model
// declares `kind` (Session::InputInfo::not_a_tensor: "" for a tensor, "sequence", "optional"):
// a tensor file's one tensor, named as the file says; a SequenceProto's elements, named
// graph::element_name(name, i); an OptionalProto's tensor named `name`, its sequence's
// elements, or none. Other kinds are refused naming the file.
std::vector<Tensor> read_value_file(const std::filesystem::path& path, std::string_view kind,
                                    const std::string& name);
// A backend test's input_0.pb, input_1.pb, ... (or outputs): file k read as the model declares its
// input (output) k, declared[k] = {name, kind}; files past the declared ones as tensors.
struct DeclaredValue {
  std::string name;
  std::string kind;  // as read_value_file's
};
std::vector<Tensor> read_value_files(std::span<const std::filesystem::path> files,
                                     std::span<const DeclaredValue> declared);
void write_tensor_file(const std::filesystem::path& path, const Tensor& tensor);

}  // namespace footprint::runtime
