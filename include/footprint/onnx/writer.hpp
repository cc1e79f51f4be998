#pragma once
// Serialising ONNX messages back to the protobuf wire format.
//
// Payloads are streamed from wherever they live (the source model's mapping, a caller's buffer),
// never gathered into one big buffer. Files are written to a temporary name and renamed into
// place, so a failed write never leaves a truncated model behind.
//
//   onnx::write_model_file(model.proto(), "out.onnx");
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <vector>

#include "footprint/onnx/proto.hpp"

namespace footprint::onnx {

struct WriteOptions {
  // Tensors whose data was external are written inline as raw_data, so the output stands alone.
  // When false, their external_data entries are written unchanged (the files must travel along).
  bool inline_external_data = true;
};

uint64_t serialized_size(const ModelProto& model, const WriteOptions& options = {});
void write_model(const ModelProto& model, std::ostream& out, const WriteOptions& options = {});
std::vector<std::byte> serialize_model(const ModelProto& model, const WriteOptions& options = {});
void write_model_file(const ModelProto& model, const std::filesystem::path& path,
                      const WriteOptions& options = {});

void write_tensor(const TensorProto& tensor, std::ostream& out, const WriteOptions& options = {});
std::vector<std::byte> serialize_tensor(const TensorProto& tensor,
                                        const WriteOptions& options = {});

// Writes `path` as write_output_file (user_files.hpp) does: via a temporary file and a rename, or
// through an existing device or FIFO.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

}  // namespace footprint::onnx
