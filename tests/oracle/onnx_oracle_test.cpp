// Cross-checks footprint's zero-copy ONNX reader and its writer against the official ONNX library
// (Debian libonnx-dev, libprotobuf underneath), over two corpora:
//
//   - every model.onnx under ../shared/models (the project's shared models), and
//   - every model.onnx under /usr/share/libonnx-testdata/data (the ONNX backend test data).
//
// Reader: each file is loaded with footprint::onnx::load_file and parsed with
// onnx::ModelProto::ParseFromString, and the two trees are compared: model header, opset imports,
// the main graph (node, initializer, input, output and value_info counts and names), every
// initializer (name, data_type, dims, storage bytes against numel x element size, payload bytes),
// every node (op_type, domain, name, inputs, outputs, attribute names, types and values,
// subgraphs recursively) and model-local functions.
//
// Writer: each model is written back with footprint::onnx::serialize_model, the bytes are parsed
// by the official library and compared with our tree the same way, and with the official parse of
// the original file field by field (MessageDifferencer). onnx::checker::check_model must pass on
// the written model wherever it passes on the original file.
//
// Every mismatch is collected with its file and field path and reported as a test failure; a
// summary line gives how many models each corpus compared. Files the official library itself
// cannot parse are reported and skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "footprint/onnx/model.hpp"
#include "footprint/onnx/proto.hpp"
#include "footprint/onnx/tensor_data.hpp"
#include "footprint/onnx/writer.hpp"
#include "oracle/official_onnx.hpp"
#include "test_support.hpp"
#include "tiny_cnn.hpp"

namespace {

namespace fs = std::filesystem;
namespace fo = footprint::onnx;
namespace ref = ::onnx;

const fs::path kOnnxTestData = footprint::testing::kOnnxTestData;

// ---------------------------------------------------------------------------------------------
// Mismatch collection

struct Report {
  std::string file;               // label of the model being compared
  std::vector<std::string>* out;  // where mismatches go

  void add(const std::string& where, const std::string& what) const {
    out->push_back(file + ": " + where + ": " + what);
  }
};

template <class A, class B>
void expect_eq(const Report& r, const std::string& where, const char* field, const A& ours,
               const B& theirs) {
  if (!(ours == theirs)) {
    std::ostringstream s;
    s << field << " differs: ours " << ours << ", official " << theirs;
    r.add(where, s.str());
  }
}

std::string in_quotes(std::string_view s) {
  return "'" + std::string(s) + "'";
}

// ---------------------------------------------------------------------------------------------
// Element sizes, computed here from the ONNX enum (independently of footprint's dtype table).

// Bits per element; 0 for string and undefined.
int element_bits(int32_t data_type) {
  switch (data_type) {
    case 1:
      return 32;  // FLOAT
    case 2:
      return 8;  // UINT8
    case 3:
      return 8;  // INT8
    case 4:
      return 16;  // UINT16
    case 5:
      return 16;  // INT16
    case 6:
      return 32;  // INT32
    case 7:
      return 64;  // INT64
    case 8:
      return 0;  // STRING
    case 9:
      return 8;  // BOOL
    case 10:
      return 16;  // FLOAT16
    case 11:
      return 64;  // DOUBLE
    case 12:
      return 32;  // UINT32
    case 13:
      return 64;  // UINT64
    case 14:
      return 64;  // COMPLEX64
    case 15:
      return 128;  // COMPLEX128
    case 16:
      return 16;  // BFLOAT16
    case 17:
    case 18:
    case 19:
    case 20:
      return 8;  // FLOAT8*
    case 21:
    case 22:
      return 4;  // UINT4, INT4
    case 23:
      return 4;  // FLOAT4E2M1
    default:
      return 0;
  }
}

uint64_t numel_of(const ref::TensorProto& t) {
  uint64_t n = 1;
  for (int64_t d : t.dims()) n *= static_cast<uint64_t>(d < 0 ? 0 : d);
  return n;
}

uint64_t expected_storage_bytes(const ref::TensorProto& t) {
  const uint64_t bits = numel_of(t) * static_cast<uint64_t>(element_bits(t.data_type()));
  return (bits + 7) / 8;
}

template <class T>
void append_le(std::string& out, T v, size_t width) {
  unsigned char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));  // the host is little-endian (x86-64, aarch64)
  out.append(reinterpret_cast<const char*>(buf), std::min(width, sizeof(T)));
}

// The payload of a tensor that stores its values in a typed field, in element layout.
std::optional<std::string> typed_payload(const ref::TensorProto& t) {
  std::string out;
  switch (t.data_type()) {
    case 1:
    case 14:
      for (float v : t.float_data()) append_le(out, v, 4);
      return out;
    case 11:
    case 15:
      for (double v : t.double_data()) append_le(out, v, 8);
      return out;
    case 7:
      for (int64_t v : t.int64_data()) append_le(out, v, 8);
      return out;
    case 12:
    case 13: {
      const size_t w = t.data_type() == 12 ? 4 : 8;
      for (uint64_t v : t.uint64_data()) append_le(out, v, w);
      return out;
    }
    case 6:
    case 5:
    case 4:
    case 10:
    case 16:
    case 3:
    case 2:
    case 9:
    case 17:
    case 18:
    case 19:
    case 20:
    case 21:
    case 22:
    case 23: {
      const int bits = element_bits(t.data_type());
      const size_t w = bits >= 8 ? static_cast<size_t>(bits / 8) : 1;  // 4-bit: one packed byte
      for (int32_t v : t.int32_data()) append_le(out, v, w);
      return out;
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::string> external_payload(const ref::TensorProto& t, const fs::path& model_dir,
                                            std::string* why) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto& e : t.external_data()) {
    if (e.key() == "location") location = e.value();
    if (e.key() == "offset") offset = std::stoull(e.value());
    if (e.key() == "length") length = std::stoull(e.value());
  }
  std::ifstream in(model_dir / location, std::ios::binary | std::ios::ate);
  if (location.empty() || !in) {
    *why = "cannot open external data '" + location + "'";
    return std::nullopt;
  }
  const auto size = static_cast<uint64_t>(in.tellg());
  if (offset > size) {
    *why = "external offset past the end";
    return std::nullopt;
  }
  const uint64_t len = length.value_or(size - offset);
  std::string out(len, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(out.data(), static_cast<std::streamsize>(len));
  return out;
}

std::string_view as_chars(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// ---------------------------------------------------------------------------------------------
// Tree comparison

enum class Mode { reader, written };

// What a comparison covered, for the summary line.
struct Stats {
  size_t nodes = 0, attributes = 0, subgraphs = 0;
  size_t tensors = 0, raw = 0, typed = 0, strings = 0, external = 0, empty = 0;
};

struct Ctx {
  Report r;
  fs::path model_dir;
  Mode mode;
  Stats* stats;
};

void compare_graph(const Ctx& c, const std::string& where, const fo::GraphProto& ours,
                   const ref::GraphProto& theirs);

void compare_tensor(const Ctx& c, const std::string& where, const fo::TensorProto& ours,
                    const ref::TensorProto& theirs) {
  const Report& r = c.r;
  expect_eq(r, where, "name", in_quotes(ours.name), in_quotes(theirs.name()));
  expect_eq(r, where, "data_type", ours.data_type, theirs.data_type());
  if (ours.dims.size() != static_cast<size_t>(theirs.dims_size())) {
    r.add(where, "dims count differs: ours " + std::to_string(ours.dims.size()) + ", official " +
                     std::to_string(theirs.dims_size()));
  } else {
    for (size_t i = 0; i < ours.dims.size(); ++i) {
      expect_eq(r, where, ("dims[" + std::to_string(i) + "]").c_str(), ours.dims[i],
                theirs.dims(static_cast<int>(i)));
    }
  }
  if (theirs.data_type() == 0 || ours.data_type != theirs.data_type()) return;

  ++c.stats->tensors;
  if (theirs.data_type() == 8) {  // STRING
    ++c.stats->strings;
    expect_eq(r, where, "string_data count", ours.string_data.size(),
              static_cast<size_t>(theirs.string_data_size()));
    if (ours.string_data.size() == static_cast<size_t>(theirs.string_data_size())) {
      for (size_t i = 0; i < ours.string_data.size(); ++i) {
        if (ours.string_data[i] != theirs.string_data(static_cast<int>(i))) {
          r.add(where, "string_data[" + std::to_string(i) + "] differs");
        }
      }
    }
    return;
  }

  const uint64_t expected = expected_storage_bytes(theirs);
  expect_eq(r, where, "storage bytes (tensor_storage_bytes vs numel x element size)",
            fo::tensor_storage_bytes(ours), expected);

  // The official payload, wherever it lives.
  const bool theirs_external = theirs.data_location() == ref::TensorProto::EXTERNAL;
  const bool ours_external = ours.data_location == fo::TensorProto::Location::external;
  std::optional<std::string> payload;
  std::string why;
  if (c.mode == Mode::reader) {
    expect_eq(r, where, "external data location", ours_external, theirs_external);
    expect_eq(r, where, "has raw_data", ours.has_raw_data, theirs.has_raw_data());
  } else if (ours_external) {
    // Written with inline_external_data: the payload must now be inline raw_data.
    if (theirs_external || !theirs.has_raw_data()) {
      r.add(where, "external tensor was not written inline as raw_data");
    }
  }
  if (expected == 0) ++c.stats->empty;
  if (theirs_external) {
    ++c.stats->external;
    payload = external_payload(theirs, c.model_dir, &why);
  } else if (theirs.has_raw_data()) {
    ++c.stats->raw;
    payload = theirs.raw_data();
    if (ours.has_raw_data) {
      expect_eq(r, where, "raw_data size", ours.raw_data.size(), theirs.raw_data().size());
      if (as_chars(ours.raw_data) != theirs.raw_data()) r.add(where, "raw_data bytes differ");
    }
  } else {
    ++c.stats->typed;
    payload = typed_payload(theirs);
  }
  if (!payload) {
    r.add(where, "official payload unavailable: " + why);
    return;
  }
  if (payload->size() != expected) {
    // The file itself is inconsistent; our reader accepted it, which it should not.
    r.add(where, "the official payload holds " + std::to_string(payload->size()) +
                     " bytes for a tensor of " + std::to_string(expected) +
                     " bytes, yet our reader accepted it");
    return;
  }
  const fo::TensorBytes bytes = fo::tensor_bytes(ours);
  if (bytes.size() != payload->size()) {
    r.add(where, "tensor_bytes size differs: ours " + std::to_string(bytes.size()) + ", official " +
                     std::to_string(payload->size()));
  } else if (as_chars(bytes.bytes()) != *payload) {
    r.add(where, "tensor_bytes payload differs from the official payload");
  }
}

void compare_sparse(const Ctx& c, const std::string& where, const fo::SparseTensorProto& ours,
                    const ref::SparseTensorProto& theirs) {
  expect_eq(c.r, where, "has values", ours.values != nullptr, theirs.has_values());
  expect_eq(c.r, where, "has indices", ours.indices != nullptr, theirs.has_indices());
  if (ours.values != nullptr && theirs.has_values()) {
    compare_tensor(c, where + "/values", *ours.values, theirs.values());
  }
  if (ours.indices != nullptr && theirs.has_indices()) {
    compare_tensor(c, where + "/indices", *ours.indices, theirs.indices());
  }
  expect_eq(c.r, where, "dims count", ours.dims.size(), static_cast<size_t>(theirs.dims_size()));
  if (ours.dims.size() == static_cast<size_t>(theirs.dims_size())) {
    for (size_t i = 0; i < ours.dims.size(); ++i) {
      expect_eq(c.r, where, "dims", ours.dims[i], theirs.dims(static_cast<int>(i)));
    }
  }
}

void compare_type(const Report& r, const std::string& where, const fo::TypeProto* ours,
                  const ref::TypeProto* theirs) {
  if ((ours == nullptr) != (theirs == nullptr)) {
    r.add(where, std::string("type presence differs: ours ") + (ours ? "set" : "unset"));
    return;
  }
  if (ours == nullptr) return;
  using K = fo::TypeProto::Kind;
  switch (theirs->value_case()) {
    case ref::TypeProto::kTensorType:
    case ref::TypeProto::kSparseTensorType: {
      const bool sparse = theirs->value_case() == ref::TypeProto::kSparseTensorType;
      const K want = sparse ? K::sparse_tensor : K::tensor;
      if (ours->kind != want) {
        r.add(where, "type kind differs (expected a tensor type)");
        return;
      }
      const int32_t elem =
          sparse ? theirs->sparse_tensor_type().elem_type() : theirs->tensor_type().elem_type();
      const bool has_shape =
          sparse ? theirs->sparse_tensor_type().has_shape() : theirs->tensor_type().has_shape();
      const ref::TensorShapeProto& shape =
          sparse ? theirs->sparse_tensor_type().shape() : theirs->tensor_type().shape();
      expect_eq(r, where, "elem_type", ours->elem_type, elem);
      expect_eq(r, where, "has shape", ours->has_shape, has_shape);
      if (ours->shape.size() != static_cast<size_t>(shape.dim_size())) {
        r.add(where, "rank differs: ours " + std::to_string(ours->shape.size()) + ", official " +
                         std::to_string(shape.dim_size()));
        return;
      }
      for (size_t i = 0; i < ours->shape.size(); ++i) {
        const auto& od = ours->shape[i];
        const auto& td = shape.dim(static_cast<int>(i));
        const std::string w = where + "/dim[" + std::to_string(i) + "]";
        expect_eq(r, w, "has dim_value", od.has_value, td.has_dim_value());
        expect_eq(r, w, "has dim_param", od.has_param, td.has_dim_param());
        if (td.has_dim_value()) expect_eq(r, w, "dim_value", od.value, td.dim_value());
        if (td.has_dim_param())
          expect_eq(r, w, "dim_param", in_quotes(od.param), in_quotes(td.dim_param()));
      }
      return;
    }
    case ref::TypeProto::kSequenceType:
      if (ours->kind != K::sequence) return r.add(where, "type kind differs (expected sequence)");
      return compare_type(
          r, where + "/seq", ours->elem,
          theirs->sequence_type().has_elem_type() ? &theirs->sequence_type().elem_type() : nullptr);
    case ref::TypeProto::kOptionalType:
      if (ours->kind != K::optional) return r.add(where, "type kind differs (expected optional)");
      return compare_type(
          r, where + "/opt", ours->elem,
          theirs->optional_type().has_elem_type() ? &theirs->optional_type().elem_type() : nullptr);
    case ref::TypeProto::kMapType:
      if (ours->kind != K::map) return r.add(where, "type kind differs (expected map)");
      expect_eq(r, where, "map key_type", ours->key_type, theirs->map_type().key_type());
      return compare_type(
          r, where + "/map", ours->elem,
          theirs->map_type().has_value_type() ? &theirs->map_type().value_type() : nullptr);
    default:
      if (ours->kind != K::none) r.add(where, "type kind differs (official: none)");
      return;
  }
}

void compare_value_infos(const Report& r, const std::string& where, const char* what,
                         const fo::Array<fo::ValueInfoProto>& ours,
                         const google::protobuf::RepeatedPtrField<ref::ValueInfoProto>& theirs) {
  if (ours.size() != static_cast<size_t>(theirs.size())) {
    r.add(where, std::string(what) + " count differs: ours " + std::to_string(ours.size()) +
                     ", official " + std::to_string(theirs.size()));
    return;
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    const auto& t = theirs[static_cast<int>(i)];
    const std::string w = where + "/" + what + "[" + std::to_string(i) + "]";
    expect_eq(r, w, "name", in_quotes(ours[i].name), in_quotes(t.name()));
    compare_type(r, w, ours[i].type, t.has_type() ? &t.type() : nullptr);
  }
}

void compare_attribute(const Ctx& c, const std::string& where, const fo::AttributeProto& ours,
                       const ref::AttributeProto& theirs) {
  const Report& r = c.r;
  expect_eq(r, where, "name", in_quotes(ours.name), in_quotes(theirs.name()));
  expect_eq(r, where, "type", static_cast<int>(ours.type), static_cast<int>(theirs.type()));
  expect_eq(r, where, "ref_attr_name", in_quotes(ours.ref_attr_name()),
            in_quotes(theirs.ref_attr_name()));
  if (static_cast<int>(ours.type) != static_cast<int>(theirs.type())) return;
  using T = fo::AttributeProto::Type;
  switch (ours.type) {
    case T::float_:
      if (std::bit_cast<uint32_t>(ours.f) != std::bit_cast<uint32_t>(theirs.f())) {
        r.add(where, "f differs: ours " + std::to_string(ours.f) + ", official " +
                         std::to_string(theirs.f()));
      }
      break;
    case T::int_:
      expect_eq(r, where, "i", ours.i, theirs.i());
      break;
    case T::string:
      if (ours.s != theirs.s()) r.add(where, "s differs");
      break;
    case T::tensor:
      if (ours.t == nullptr || !theirs.has_t()) {
        r.add(where, "tensor attribute value missing");
      } else {
        compare_tensor(c, where + "/t", *ours.t, theirs.t());
      }
      break;
    case T::graph:
      if (ours.g == nullptr || !theirs.has_g()) {
        r.add(where, "graph attribute value missing");
      } else {
        compare_graph(c, where + "/g", *ours.g, theirs.g());
      }
      break;
    case T::sparse_tensor:
      if (ours.sparse_tensor() == nullptr || !theirs.has_sparse_tensor()) {
        r.add(where, "sparse_tensor attribute value missing");
      } else {
        compare_sparse(c, where + "/sparse_tensor", *ours.sparse_tensor(), theirs.sparse_tensor());
      }
      break;
    case T::type_proto:
      compare_type(r, where + "/tp", ours.tp(), theirs.has_tp() ? &theirs.tp() : nullptr);
      break;
    case T::floats: {
      std::vector<uint32_t> v;
      ours.floats.for_each([&](uint64_t bits) { v.push_back(static_cast<uint32_t>(bits)); });
      std::vector<uint32_t> w;
      for (float f : theirs.floats()) w.push_back(std::bit_cast<uint32_t>(f));
      if (v != w)
        r.add(where, "floats differ (" + std::to_string(v.size()) + " vs " +
                         std::to_string(w.size()) + " values)");
      break;
    }
    case T::ints: {
      std::vector<int64_t> v;
      ours.ints.for_each([&](uint64_t x) { v.push_back(static_cast<int64_t>(x)); });
      std::vector<int64_t> w(theirs.ints().begin(), theirs.ints().end());
      if (v != w)
        r.add(where, "ints differ (" + std::to_string(v.size()) + " vs " +
                         std::to_string(w.size()) + " values)");
      break;
    }
    case T::strings: {
      bool same = ours.strings.size() == static_cast<size_t>(theirs.strings_size());
      for (size_t i = 0; same && i < ours.strings.size(); ++i) {
        same = ours.strings[i] == theirs.strings(static_cast<int>(i));
      }
      if (!same) r.add(where, "strings differ");
      break;
    }
    case T::tensors:
      if (ours.tensors().size() != static_cast<size_t>(theirs.tensors_size())) {
        r.add(where, "tensors count differs");
      } else {
        for (size_t i = 0; i < ours.tensors().size(); ++i) {
          compare_tensor(c, where + "/tensors[" + std::to_string(i) + "]", ours.tensors()[i],
                         theirs.tensors(static_cast<int>(i)));
        }
      }
      break;
    case T::graphs:
      if (ours.graphs().size() != static_cast<size_t>(theirs.graphs_size())) {
        r.add(where, "graphs count differs");
      } else {
        for (size_t i = 0; i < ours.graphs().size(); ++i) {
          compare_graph(c, where + "/graphs[" + std::to_string(i) + "]", ours.graphs()[i],
                        theirs.graphs(static_cast<int>(i)));
        }
      }
      break;
    case T::sparse_tensors:
      if (ours.sparse_tensors().size() != static_cast<size_t>(theirs.sparse_tensors_size())) {
        r.add(where, "sparse_tensors count differs");
      } else {
        for (size_t i = 0; i < ours.sparse_tensors().size(); ++i) {
          compare_sparse(c, where + "/sparse_tensors[" + std::to_string(i) + "]",
                         ours.sparse_tensors()[i], theirs.sparse_tensors(static_cast<int>(i)));
        }
      }
      break;
    case T::type_protos:
      if (ours.type_protos().size() != static_cast<size_t>(theirs.type_protos_size())) {
        r.add(where, "type_protos count differs");
      } else {
        for (size_t i = 0; i < ours.type_protos().size(); ++i) {
          compare_type(r, where + "/type_protos[" + std::to_string(i) + "]", &ours.type_protos()[i],
                       &theirs.type_protos(static_cast<int>(i)));
        }
      }
      break;
    case T::undefined:
      break;
  }
}

void compare_names(const Report& r, const std::string& where, const char* what,
                   const fo::Array<std::string_view>& ours,
                   const google::protobuf::RepeatedPtrField<std::string>& theirs) {
  if (ours.size() != static_cast<size_t>(theirs.size())) {
    r.add(where, std::string(what) + " count differs: ours " + std::to_string(ours.size()) +
                     ", official " + std::to_string(theirs.size()));
    return;
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    if (ours[i] != theirs[static_cast<int>(i)]) {
      r.add(where, std::string(what) + "[" + std::to_string(i) + "] differs: ours " +
                       in_quotes(ours[i]) + ", official " + in_quotes(theirs[static_cast<int>(i)]));
    }
  }
}

void compare_nodes(const Ctx& c, const std::string& where, const fo::Array<fo::NodeProto>& ours,
                   const google::protobuf::RepeatedPtrField<ref::NodeProto>& theirs) {
  const Report& r = c.r;
  if (ours.size() != static_cast<size_t>(theirs.size())) {
    r.add(where, "node count differs: ours " + std::to_string(ours.size()) + ", official " +
                     std::to_string(theirs.size()));
    return;
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    const fo::NodeProto& n = ours[i];
    const ref::NodeProto& t = theirs[static_cast<int>(i)];
    const std::string w = where + "/node[" + std::to_string(i) + "](" + t.op_type() + ")";
    ++c.stats->nodes;
    c.stats->attributes += static_cast<size_t>(t.attribute_size());
    expect_eq(r, w, "op_type", in_quotes(n.op_type), in_quotes(t.op_type()));
    expect_eq(r, w, "domain", in_quotes(n.domain), in_quotes(t.domain()));
    expect_eq(r, w, "name", in_quotes(n.name), in_quotes(t.name()));
    compare_names(r, w, "input", n.inputs, t.input());
    compare_names(r, w, "output", n.outputs, t.output());
    if (n.attributes.size() != static_cast<size_t>(t.attribute_size())) {
      r.add(w, "attribute count differs: ours " + std::to_string(n.attributes.size()) +
                   ", official " + std::to_string(t.attribute_size()));
      continue;
    }
    for (size_t a = 0; a < n.attributes.size(); ++a) {
      compare_attribute(c, w + "/attr[" + t.attribute(static_cast<int>(a)).name() + "]",
                        n.attributes[a], t.attribute(static_cast<int>(a)));
    }
  }
}

void compare_graph(const Ctx& c, const std::string& where, const fo::GraphProto& ours,
                   const ref::GraphProto& theirs) {
  const Report& r = c.r;
  ++c.stats->subgraphs;
  expect_eq(r, where, "graph name", in_quotes(ours.name), in_quotes(theirs.name()));
  compare_value_infos(r, where, "input", ours.inputs, theirs.input());
  compare_value_infos(r, where, "output", ours.outputs, theirs.output());
  compare_value_infos(r, where, "value_info", ours.value_info, theirs.value_info());
  if (ours.initializers.size() != static_cast<size_t>(theirs.initializer_size())) {
    r.add(where, "initializer count differs: ours " + std::to_string(ours.initializers.size()) +
                     ", official " + std::to_string(theirs.initializer_size()));
  } else {
    for (size_t i = 0; i < ours.initializers.size(); ++i) {
      compare_tensor(c, where + "/initializer[" + std::to_string(i) + "]", ours.initializers[i],
                     theirs.initializer(static_cast<int>(i)));
    }
  }
  if (ours.sparse_initializers.size() != static_cast<size_t>(theirs.sparse_initializer_size())) {
    r.add(where, "sparse_initializer count differs");
  } else {
    for (size_t i = 0; i < ours.sparse_initializers.size(); ++i) {
      compare_sparse(c, where + "/sparse_initializer[" + std::to_string(i) + "]",
                     ours.sparse_initializers[i], theirs.sparse_initializer(static_cast<int>(i)));
    }
  }
  compare_nodes(c, where, ours.nodes, theirs.node());
}

void compare_model(const Ctx& c, const fo::Model& model, const ref::ModelProto& theirs) {
  const Report& r = c.r;
  const fo::ModelProto& ours = model.proto();
  expect_eq(r, "model", "ir_version", ours.ir_version, theirs.ir_version());
  expect_eq(r, "model", "model_version", ours.model_version, theirs.model_version());
  expect_eq(r, "model", "producer_name", in_quotes(ours.producer_name),
            in_quotes(theirs.producer_name()));
  expect_eq(r, "model", "domain", in_quotes(ours.domain), in_quotes(theirs.domain()));
  if (ours.opset_import.size() != static_cast<size_t>(theirs.opset_import_size())) {
    r.add("model", "opset_import count differs");
  } else {
    for (size_t i = 0; i < ours.opset_import.size(); ++i) {
      const auto& t = theirs.opset_import(static_cast<int>(i));
      expect_eq(r, "model/opset_import", "domain", in_quotes(ours.opset_import[i].domain),
                in_quotes(t.domain()));
      expect_eq(r, "model/opset_import", "version", ours.opset_import[i].version, t.version());
    }
  }
  expect_eq(r, "model", "metadata_props count", ours.metadata_props.size(),
            static_cast<size_t>(theirs.metadata_props_size()));
  expect_eq(r, "model", "training_info count", ours.training_info.size(),
            static_cast<size_t>(theirs.training_info_size()));
  expect_eq(r, "model", "has graph", ours.graph != nullptr, theirs.has_graph());
  // The main graph: model.graph() is the accessor the rest of footprint uses.
  compare_graph(c, "graph", model.graph(), theirs.graph());
  if (ours.functions.size() != static_cast<size_t>(theirs.functions_size())) {
    r.add("model", "functions count differs");
  } else {
    for (size_t i = 0; i < ours.functions.size(); ++i) {
      const fo::FunctionProto& f = ours.functions[i];
      const ref::FunctionProto& t = theirs.functions(static_cast<int>(i));
      const std::string w = "function[" + std::string(t.name()) + "]";
      expect_eq(r, w, "name", in_quotes(f.name), in_quotes(t.name()));
      expect_eq(r, w, "domain", in_quotes(f.domain), in_quotes(t.domain()));
      compare_names(r, w, "input", f.inputs, t.input());
      compare_names(r, w, "output", f.outputs, t.output());
      compare_names(r, w, "attribute", f.attributes, t.attribute());
      compare_nodes(c, w, f.nodes, t.node());
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Corpora and per-file checks

std::vector<fs::path> models_under(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && e.path().filename() == "model.onnx") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string label_of(const fs::path& p, const fs::path& root) {
  return fs::relative(p, root).string();
}

bool official_parse(const std::string& bytes, ref::ModelProto* out) {
  // ParseFromString uses no total-size limit below 2 GiB in protobuf >= 3.6; the largest model
  // here is tens of MB.
  return out->ParseFromString(bytes);
}

std::optional<std::string> checker_error(const ref::ModelProto& m) {
  try {
    ref::checker::check_model(m);
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
}

struct CorpusResult {
  size_t files = 0;
  size_t compared = 0;
  size_t official_unparsable = 0;
  size_t checker_original_pass = 0;  // writer: models the checker was run on after writing
  size_t differencer_checked = 0;
  Stats stats;
  std::vector<std::string> mismatches;
  std::vector<std::string> notes;
};

// Reader: our tree against the official parse of the same file.
void reader_check(const fs::path& file, const fs::path& root, CorpusResult& res) {
  const std::string label = label_of(file, root);
  ++res.files;
  ref::ModelProto theirs;
  if (!official_parse(read_all(file), &theirs)) {
    ++res.official_unparsable;
    res.notes.push_back(label + ": the official library cannot parse it; skipped");
    return;
  }
  std::optional<fo::Model> model;
  try {
    model.emplace(fo::load_file(file));
  } catch (const std::exception& e) {
    res.mismatches.push_back(
        label + ": our reader rejects a model the official library accepts: " + e.what());
    return;
  }
  ++res.compared;
  compare_model(Ctx{Report{label, &res.mismatches}, file.parent_path(), Mode::reader, &res.stats},
                *model, theirs);
}

// Writer: serialise our tree, parse it with the official library, compare, and run the checker.
void writer_check(const fs::path& file, const fs::path& root, CorpusResult& res) {
  const std::string label = label_of(file, root);
  ++res.files;
  ref::ModelProto original;
  if (!official_parse(read_all(file), &original)) {
    ++res.official_unparsable;
    res.notes.push_back(label + ": the official library cannot parse it; skipped");
    return;
  }
  std::optional<fo::Model> model;
  try {
    model.emplace(fo::load_file(file));
  } catch (const std::exception& e) {
    res.mismatches.push_back(label +
                             ": our reader rejects a model the official library accepts "
                             "(not round-tripped): " +
                             e.what());
    return;
  }
  std::vector<std::byte> bytes;
  try {
    bytes = fo::serialize_model(model->proto());
  } catch (const std::exception& e) {
    res.mismatches.push_back(label + ": serialize_model throws: " + e.what());
    return;
  }
  if (fo::serialized_size(model->proto()) != bytes.size()) {
    res.mismatches.push_back(label + ": serialized_size " +
                             std::to_string(fo::serialized_size(model->proto())) +
                             " differs from the written size " + std::to_string(bytes.size()));
  }
  ref::ModelProto written;
  if (!written.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    res.mismatches.push_back(label + ": the official library cannot parse our written bytes");
    return;
  }
  ++res.compared;
  const Report rep{label + " (written)", &res.mismatches};
  compare_model(Ctx{rep, file.parent_path(), Mode::written, &res.stats}, *model, written);

  // Field by field against the official parse of the original. Models with external data are
  // written inline on purpose, so they are left to the comparison above.
  bool has_external = false;
  for (const auto& t : original.graph().initializer()) {
    has_external |= t.data_location() == ref::TensorProto::EXTERNAL;
  }
  if (!has_external) {
    ++res.differencer_checked;
    std::string diff;
    // Presence of fields set to their default value is not preserved (the writer omits them, as
    // any proto3-style writer does), so defaults compare equal to unset fields.
    google::protobuf::util::DefaultFieldComparator comparator;
    comparator.set_treat_nan_as_equal(true);
    google::protobuf::util::MessageDifferencer differ;
    differ.set_field_comparator(&comparator);
    differ.set_message_field_comparison(google::protobuf::util::MessageDifferencer::EQUIVALENT);
    differ.ReportDifferencesToString(&diff);
    if (!differ.Compare(original, written)) {
      if (diff.size() > 600) diff = diff.substr(0, 600) + "...";
      rep.add("model", "differs from the original file field by field:\n" + diff);
    }
  }

  if (const auto original_error = checker_error(original); !original_error) {
    ++res.checker_original_pass;
    if (const auto err = checker_error(written)) {
      rep.add("checker",
              "check_model passes on the original but fails on the written model: " + *err);
    }
  }
}

void report(const std::string& corpus, const char* what, const CorpusResult& res,
            std::chrono::steady_clock::duration took) {
  constexpr size_t kMaxPrinted = 200;
  for (size_t i = 0; i < res.mismatches.size() && i < kMaxPrinted; ++i) {
    ADD_FAILURE() << res.mismatches[i];
  }
  if (res.mismatches.size() > kMaxPrinted) {
    ADD_FAILURE() << (res.mismatches.size() - kMaxPrinted) << " more mismatches not printed";
  }
  for (const auto& n : res.notes) std::cout << "[  NOTE    ] " << n << "\n";
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
  std::cout << "[  SUMMARY ] " << corpus << " " << what << ": compared " << res.compared
            << " models of " << res.files << " files (" << res.official_unparsable
            << " unparsable by the official library)";
  if (std::string_view(what) == "writer") {
    std::cout << ", " << res.differencer_checked << " compared field by field, "
              << res.checker_original_pass << " checked with onnx::checker";
  }
  const Stats& st = res.stats;
  std::cout << ", " << res.mismatches.size() << " mismatches, " << ms << " ms\n"
            << "[  SUMMARY ]   covered " << st.subgraphs << " graphs (main and nested), "
            << st.nodes << " nodes, " << st.attributes << " attributes, " << st.tensors
            << " tensors (" << st.raw << " raw_data, " << st.typed << " typed fields, "
            << st.strings << " string, " << st.external << " external, " << st.empty << " empty)"
            << std::endl;
  EXPECT_EQ(res.mismatches.size(), 0u) << corpus << " " << what << ": mismatches listed above";
  EXPECT_GT(res.compared, 0u) << corpus << ": no model was compared";
}

template <class F>
void run_corpus(const std::string& corpus, const char* what, const std::vector<fs::path>& files,
                const fs::path& root, F check) {
  const auto start = std::chrono::steady_clock::now();
  CorpusResult res;
  for (const auto& f : files) check(f, root, res);
  report(corpus, what, res, std::chrono::steady_clock::now() - start);
}

// ---------------------------------------------------------------------------------------------
// Tests

TEST(OnnxOracle, SharedModelsReader) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto files = footprint::testing::shared_models();
  run_corpus("shared/models", "reader", files, footprint::testing::shared_dir() / "models",
             reader_check);
}

TEST(OnnxOracle, SharedModelsWriterRoundTrip) {
  FOOTPRINT_REQUIRE_SHARED();
  const auto files = footprint::testing::shared_models();
  run_corpus("shared/models", "writer", files, footprint::testing::shared_dir() / "models",
             writer_check);
}

TEST(OnnxOracle, OnnxTestDataReader) {
  const auto files = models_under(kOnnxTestData);
  if (files.empty()) {
    GTEST_SKIP() << kOnnxTestData << " has no model.onnx (install libonnx-testdata): skipped";
  }
  run_corpus("libonnx-testdata", "reader", files, kOnnxTestData, reader_check);
}

TEST(OnnxOracle, OnnxTestDataWriterRoundTrip) {
  const auto files = models_under(kOnnxTestData);
  if (files.empty()) {
    GTEST_SKIP() << kOnnxTestData << " has no model.onnx (install libonnx-testdata): skipped";
  }
  run_corpus("libonnx-testdata", "writer", files, kOnnxTestData, writer_check);
}

// The oracle itself: differences injected into the official tree must be reported.
TEST(OnnxOracle, ComparisonDetectsInjectedDifferences) {
  std::vector<std::byte> bytes = footprint::examples::make_tiny_cnn();
  ref::ModelProto base;
  ASSERT_TRUE(base.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  const fo::Model model = fo::load(fo::ModelSource::adopt(std::move(bytes), "tiny_cnn"));
  auto mismatches = [&](const ref::ModelProto& theirs) {
    std::vector<std::string> out;
    Stats stats;
    compare_model(Ctx{Report{"tiny_cnn", &out}, fs::path(), Mode::reader, &stats}, model, theirs);
    return out;
  };
  ASSERT_EQ(mismatches(base), std::vector<std::string>{});
  ASSERT_GT(base.graph().initializer_size(), 0);
  ASSERT_GT(base.graph().node_size(), 0);

  struct Case {
    const char* expect;  // a substring of some reported mismatch
    std::function<void(ref::ModelProto&)> mutate;
  };
  const std::vector<Case> cases = {
      {"op_type", [](ref::ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_op_type("X"); }},
      {"domain", [](ref::ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_domain("d"); }},
      {"input[0] differs",
       [](ref::ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_input(0, "zz"); }},
      {"output count",
       [](ref::ModelProto& m) { m.mutable_graph()->mutable_node(0)->add_output("extra"); }},
      {"node count",
       [](ref::ModelProto& m) { m.mutable_graph()->add_node()->set_op_type("Relu"); }},
      {"initializer count",
       [](ref::ModelProto& m) { m.mutable_graph()->mutable_initializer()->RemoveLast(); }},
      {"input count", [](ref::ModelProto& m) { m.mutable_graph()->add_input()->set_name("x2"); }},
      {"output count", [](ref::ModelProto& m) { m.mutable_graph()->add_output()->set_name("y2"); }},
      {"initializer[0]: name",
       [](ref::ModelProto& m) { m.mutable_graph()->mutable_initializer(0)->set_name("w?"); }},
      {"data_type",
       [](ref::ModelProto& m) { m.mutable_graph()->mutable_initializer(0)->set_data_type(11); }},
      {"dims[0]",
       [](ref::ModelProto& m) {
         auto* t = m.mutable_graph()->mutable_initializer(0);
         t->set_dims(0, t->dims(0) + 1);
       }},
      {"payload",
       [](ref::ModelProto& m) {
         auto* t = m.mutable_graph()->mutable_initializer(0);
         if (t->has_raw_data()) {
           (*t->mutable_raw_data())[0] ^= 1;
         } else {
           t->set_float_data(0, t->float_data(0) + 1.0f);
         }
       }},
      {"attr[",
       [](ref::ModelProto& m) {
         for (auto& n : *m.mutable_graph()->mutable_node()) {
           for (auto& a : *n.mutable_attribute()) {
             if (a.type() == ref::AttributeProto::INTS && a.ints_size() > 0) {
               a.set_ints(0, a.ints(0) + 1);
               return;
             }
             if (a.type() == ref::AttributeProto::INT) {
               a.set_i(a.i() + 1);
               return;
             }
           }
         }
       }},
      {"attribute count",
       [](ref::ModelProto& m) {
         m.mutable_graph()->mutable_node(0)->add_attribute()->set_name("a");
       }},
  };
  for (const auto& c : cases) {
    ref::ModelProto m = base;
    c.mutate(m);
    const auto found = mismatches(m);
    const bool hit = std::any_of(found.begin(), found.end(), [&](const std::string& s) {
      return s.find(c.expect) != std::string::npos;
    });
    EXPECT_TRUE(hit) << "a change expected to report '" << c.expect << "' was not noticed ("
                     << found.size() << " mismatches)";
  }
}

TEST(OnnxOracle, TinyCnnPassesCheckerAndShapeInference) {
  const std::vector<std::byte> bytes = footprint::examples::make_tiny_cnn();
  ref::ModelProto m;
  ASSERT_TRUE(m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      << "the official library cannot parse make_tiny_cnn()";
  EXPECT_EQ(checker_error(m).value_or(""), "") << "onnx::checker::check_model rejects tiny_cnn";

  // Infer from scratch: drop the declared output shape and any value_info first.
  ASSERT_EQ(m.graph().input_size(), 1);
  ASSERT_EQ(m.graph().output_size(), 1);
  ASSERT_EQ(m.graph().output(0).name(), "y");
  const auto& in_shape = m.graph().input(0).type().tensor_type().shape();
  ASSERT_GE(in_shape.dim_size(), 1);
  ASSERT_TRUE(in_shape.dim(0).has_dim_param()) << "the batch dim of x is not symbolic";
  const std::string batch = in_shape.dim(0).dim_param();
  EXPECT_EQ(batch, "N");
  m.mutable_graph()->clear_value_info();
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();

  try {
    ref::shape_inference::InferShapes(m, ref::OpSchemaRegistry::Instance(),
                                      ref::ShapeInferenceOptions(/*check_type=*/true,
                                                                 /*strict_mode=*/1));
  } catch (const std::exception& e) {
    FAIL() << "InferShapes throws on tiny_cnn: " << e.what();
  }
  const auto& y = m.graph().output(0).type().tensor_type();
  EXPECT_EQ(y.elem_type(), ref::TensorProto::FLOAT);
  ASSERT_TRUE(y.has_shape()) << "InferShapes gave no shape for y";
  ASSERT_EQ(y.shape().dim_size(), 2) << y.shape().DebugString();
  EXPECT_TRUE(y.shape().dim(0).has_dim_param()) << y.shape().DebugString();
  EXPECT_EQ(y.shape().dim(0).dim_param(), batch);
  EXPECT_TRUE(y.shape().dim(1).has_dim_value()) << y.shape().DebugString();
  EXPECT_EQ(y.shape().dim(1).dim_value(), 10);
  // Every intermediate got a type too.
  EXPECT_EQ(m.graph().value_info_size(), m.graph().node_size() - 1);
}

}  // namespace
