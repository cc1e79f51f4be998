// libFuzzer target for the ONNX reader: every input is loaded as a model from borrowed bytes (then
// turned into a graph and a topological order, and every tensor payload is decoded), as a `.pb`
// tensor file, and as the `.pb` of a sequence and of an optional. footprint::Error is the only
// acceptable failure; anything else — a sanitizer report, another exception, a broken invariant,
// memory beyond the bound below — aborts, so libFuzzer records the input as a crash.
//
//   scripts/fuzz                       # build, seed, run 60 s
//   build/fuzz/bin/reader_fuzz crash-* # replay an artifact
//
// Memory bound. The reader allocates its parse tree from LoadOptions::memory, which here is a
// CountingResource whose limit is kBytesPerInputByte x input + kSlackBytes: a request past it is
// refused (std::bad_alloc) and reported. The tree holds one struct (at most kLargestStruct bytes)
// per message actually present, and a message costs at least 2 input bytes (a tag and a length),
// so the tree needs at most kLargestStruct / 2 bytes per input byte; the bump arena may leave up
// to half of what it reserved unused, hence kLargestStruct per input byte. Trusting a claimed
// length or count (700 MB in a 100-byte file) is far beyond that.
//
// On top of that bound, the per-request rule: no single request larger than the input
// plus kStrictSlack (one minimal arena chunk). And every error message is one non-empty line; a
// load error starts with "<source>: offset N: ". FOOTPRINT_FUZZ_MULTILINE_OK=1 skips the one-line
// check, to keep fuzzing for other bugs while a message bug is open.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <span>
#include <string>
#include <string_view>

#include "footprint/core/counting_resource.hpp"
#include "footprint/core/error.hpp"
#include "footprint/graph/graph.hpp"
#include "footprint/graph/op_registry.hpp"
#include "footprint/graph/topo_order.hpp"
#include "footprint/onnx/model.hpp"
#include "footprint/onnx/model_source.hpp"
#include "footprint/onnx/proto.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/tensor_file.hpp"

namespace {

using namespace footprint;

constexpr uint64_t kLargestStruct = std::max(
    {sizeof(onnx::ModelProto), sizeof(onnx::GraphProto), sizeof(onnx::NodeProto),
     sizeof(onnx::AttributeProto), sizeof(onnx::TensorProto), sizeof(onnx::SparseTensorProto),
     sizeof(onnx::TypeProto), sizeof(onnx::ValueInfoProto), sizeof(onnx::FunctionProto),
     sizeof(onnx::TrainingInfoProto), sizeof(onnx::DimensionProto), sizeof(onnx::StringEntry),
     sizeof(onnx::OperatorSetId), sizeof(onnx::TensorAnnotation), sizeof(onnx::ValueFileProto)});
constexpr uint64_t kBytesPerInputByte = kLargestStruct;
// Covers the arena's first chunk (at least 512 bytes, src/onnx/model.cpp) and its header.
constexpr uint64_t kSlackBytes = 4096;
// The per-request rule, "never an allocation larger than the file": the arena's smallest
// chunk (512 bytes) is the only request a tiny input may exceed its size with.
constexpr uint64_t kStrictSlack = 512;
// Decoding a payload (tensor_bytes) writes at most 8 bytes per input byte: a 1-byte varint
// becomes an int64 or uint64 element.
constexpr uint64_t kDecodeBytesPerInputByte = 8;

constexpr std::string_view kModelName = "fuzz.onnx";
constexpr std::string_view kTensorName = "fuzz.pb";

[[noreturn]] void die(std::string_view what, const std::string& detail = {}) {
  std::fprintf(stderr, "\nreader_fuzz: %.*s%s%s\n", static_cast<int>(what.size()), what.data(),
               detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

bool multiline_ok() {
  static const bool on = [] {
    const char* s = std::getenv("FOOTPRINT_FUZZ_MULTILINE_OK");
    return s != nullptr && *s != '\0' && *s != '0';
  }();
  return on;
}

// A load error names the source and the offset first; every error is one non-empty line.
void check_message(const Error& e, std::string_view required_prefix) {
  const std::string m = e.what();
  if (m.empty()) die("footprint::Error with an empty message");
  if (!required_prefix.empty() && m.rfind(required_prefix, 0) != 0) {
    die("load error without the '" + std::string(required_prefix) + "' prefix", m);
  }
  if (!multiline_ok() && m.find_first_of("\r\n") != std::string::npos) {
    die("error message is not one line", m);
  }
}

void check_memory(const CountingResource& memory, size_t input, std::string_view what) {
  if (memory.largest_request() > input + kStrictSlack) {
    die(std::string(what) + ": a request larger than the input",
        std::to_string(memory.largest_request()) + " bytes for a " + std::to_string(input) +
            "-byte input");
  }
}

// ---- Walking what was parsed: every encoded scalar list decodes to exactly `count` values, and
// every payload decodes to exactly its storage size.

struct Walk {
  size_t input;
  CountingResource decode;  // what tensor_bytes copies or decodes into

  explicit Walk(size_t input_bytes)
      : input(input_bytes), decode(kDecodeBytesPerInputByte * input_bytes + kSlackBytes) {}

  static void scalars(const onnx::RepeatedScalar& r, std::string_view what) {
    uint64_t n = 0;
    r.for_each([&](uint64_t) { ++n; });
    if (n != r.count) {
      die(std::string(what) + ": for_each visited " + std::to_string(n) + " values, count is " +
          std::to_string(r.count));
    }
  }

  void tensor(const onnx::TensorProto& t) {
    scalars(t.typed_data, "TensorProto typed data");
    onnx::TensorBytes bytes;
    try {
      bytes = onnx::tensor_bytes(t, 64, &decode);
    } catch (const std::bad_alloc&) {
      if (decode.refused() == 0) throw;
      die("decoding a payload asked for more than " + std::to_string(kDecodeBytesPerInputByte) +
          " bytes per input byte");
    }
    if (bytes.size() != onnx::tensor_storage_bytes(t)) {
      die("tensor_bytes returned " + std::to_string(bytes.size()) + " bytes; storage is " +
          std::to_string(onnx::tensor_storage_bytes(t)));
    }
  }

  void sparse(const onnx::SparseTensorProto& s) {
    if (s.values != nullptr) tensor(*s.values);
    if (s.indices != nullptr) tensor(*s.indices);
  }

  void attribute(const onnx::AttributeProto& a) {
    scalars(a.ints, "AttributeProto.ints");
    scalars(a.floats, "AttributeProto.floats");
    if (a.t != nullptr) tensor(*a.t);
    for (const auto& t : a.tensors()) tensor(t);
    if (a.g != nullptr) graph(*a.g);
    for (const auto& g : a.graphs()) graph(g);
    if (a.sparse_tensor() != nullptr) sparse(*a.sparse_tensor());
    for (const auto& s : a.sparse_tensors()) sparse(s);
  }

  void nodes(const onnx::Array<onnx::NodeProto>& ns) {
    for (const auto& n : ns) {
      for (const auto& a : n.attributes) attribute(a);
    }
  }

  // Recursion follows the parsed tree, whose depth the reader bounds (LoadOptions::max_depth).
  void graph(const onnx::GraphProto& g) {
    for (const auto& t : g.initializers) tensor(t);
    for (const auto& s : g.sparse_initializers) sparse(s);
    nodes(g.nodes);
  }

  void model(const onnx::ModelProto& m) {
    if (m.graph != nullptr) graph(*m.graph);
    for (const auto& f : m.functions) {
      nodes(f.nodes);
      for (const auto& a : f.attribute_protos) attribute(a);
    }
    for (const auto& ti : m.training_info) {
      if (ti.initialization != nullptr) graph(*ti.initialization);
      if (ti.algorithm != nullptr) graph(*ti.algorithm);
    }
  }
};

void fuzz_model(std::span<const std::byte> bytes) {
  CountingResource memory(kBytesPerInputByte * bytes.size() + kSlackBytes);
  bool loaded = false;
  try {
    const onnx::Model model =
        onnx::load(onnx::ModelSource::borrow(bytes, std::string(kModelName)), {.memory = &memory});
    loaded = true;
    check_memory(memory, bytes.size(), "load");
    Walk walk(bytes.size());
    walk.model(model.proto());
    const graph::Graph g = graph::Graph::from_onnx(model, graph::OpRegistry::builtin());
    const auto order = graph::topo_order(g);
    if (!graph::is_topological(g, order)) die("topo_order returned a non-topological order");
  } catch (const Error& e) {
    // Graph errors name the graph and node instead of the file (graph.hpp).
    const std::string prefix = loaded ? std::string() : std::string(kModelName) + ": offset ";
    check_message(e, prefix);
    check_memory(memory, bytes.size(), "failed load");
  } catch (const std::bad_alloc&) {
    if (memory.refused() != 0) {
      die("the reader asked for more than " + std::to_string(kBytesPerInputByte) +
              " bytes per input byte",
          std::to_string(bytes.size()) + "-byte input, limit " +
              std::to_string(memory.limit_bytes()) + ", " + std::to_string(memory.current_bytes()) +
              " bytes held");
    }
    throw;
  }
}

void fuzz_tensor_file(std::span<const std::byte> bytes) {
  CountingResource memory(kBytesPerInputByte * bytes.size() + kSlackBytes);
  try {
    const auto file = onnx::TensorFile::load(
        onnx::ModelSource::borrow(bytes, std::string(kTensorName)), {.memory = &memory});
    check_memory(memory, bytes.size(), "tensor file");
    Walk walk(bytes.size());
    walk.tensor(file.tensor());
  } catch (const Error& e) {
    check_message(e, std::string(kTensorName) + ": offset ");
    check_memory(memory, bytes.size(), "failed tensor file");
  } catch (const std::bad_alloc&) {
    if (memory.refused() != 0) {
      die("the tensor-file reader asked for more than " + std::to_string(kBytesPerInputByte) +
          " bytes per input byte");
    }
    throw;
  }
}

// The same bytes as the .pb of a sequence and of an optional input (SequenceProto,
// OptionalProto of tensors): the same bounds, and every element's payload decoded.
void fuzz_value_file(std::span<const std::byte> bytes, onnx::ValueFileProto::Kind kind) {
  CountingResource memory(kBytesPerInputByte * bytes.size() + kSlackBytes);
  try {
    const auto file = onnx::TensorFile::load_value(
        onnx::ModelSource::borrow(bytes, std::string(kTensorName)), kind, {.memory = &memory});
    check_memory(memory, bytes.size(), "sequence or optional file");
    Walk walk(bytes.size());
    for (const onnx::TensorProto& t : file.value()->tensors) walk.tensor(t);
  } catch (const Error& e) {
    check_message(e, std::string(kTensorName) + ": offset ");
    check_memory(memory, bytes.size(), "failed sequence or optional file");
  } catch (const std::bad_alloc&) {
    if (memory.refused() != 0) {
      die("the sequence/optional reader asked for more than " + std::to_string(kBytesPerInputByte) +
          " bytes per input byte");
    }
    throw;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes{reinterpret_cast<const std::byte*>(data), size};
  fuzz_model(bytes);
  fuzz_tensor_file(bytes);
  fuzz_value_file(bytes, onnx::ValueFileProto::Kind::sequence);
  fuzz_value_file(bytes, onnx::ValueFileProto::Kind::optional);
  return 0;
}
