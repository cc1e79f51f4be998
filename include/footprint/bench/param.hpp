#pragma once
// Benchmark parameters and what a record keeps of them: a representation (name, type and, for
// tensors and models, dtype, shape, bytes, content hash, source path), never the object. A
// record that held the object would keep a 16 GB model alive for as long as the records live.
//
//   bench::Param p("x", runtime::Tensor("x", DType::float32, {1024}));
//   bench::ParamRepr r = p.represent();   // {name "x", type "tensor", dtype "float", ...}
//
// User types get a representation by specialising bench::Representation<T>:
//
//   template <> struct footprint::bench::Representation<MyImage> {
//     static void fill(const MyImage& v, ParamRepr& r) { r.type = "image"; r.shape = {...}; }
//   };
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "footprint/runtime/tensor.hpp"

namespace footprint::bench {

struct ParamRepr {
  std::string name;
  std::string type;            // "int", "float", "string", "bool", "tensor", "model", user's
  std::string value;           // the value itself, for scalars only
  std::string dtype;           // tensors
  std::vector<int64_t> shape;  // tensors
  uint64_t bytes = 0;          // tensors and models: payload bytes
  std::string hash;            // xxh3-128 of the payload, 32 hex digits
  std::string source;          // where the payload came from (a path), when known
};

// A model given by its path: the benchmark loads it (usually through a memo); the parameter
// only names it. Its representation hashes the file.
struct ModelRef {
  std::filesystem::path path;
};

// Per-type hook. The primary template has no fill(): a type without a specialisation (and
// that is not one of the builtins below) does not compile as a parameter.
template <class T>
struct Representation;

void fill_floating(double v, ParamRepr& r);
struct IntegerRepresentation {
  template <class T>
  static void fill(const T& v, ParamRepr& r) {
    r.type = "int";
    r.value = std::to_string(v);
  }
};
struct FloatingRepresentation {
  template <class T>
  static void fill(const T& v, ParamRepr& r) {
    fill_floating(static_cast<double>(v), r);
  }
};
// One specialisation per builtin arithmetic type (no constrained partial specialisation: the
// formatter in use mangles requires-clauses).
template <>
struct Representation<short> : IntegerRepresentation {};
template <>
struct Representation<int> : IntegerRepresentation {};
template <>
struct Representation<long> : IntegerRepresentation {};
template <>
struct Representation<long long> : IntegerRepresentation {};
template <>
struct Representation<unsigned short> : IntegerRepresentation {};
template <>
struct Representation<unsigned> : IntegerRepresentation {};
template <>
struct Representation<unsigned long> : IntegerRepresentation {};
template <>
struct Representation<unsigned long long> : IntegerRepresentation {};
template <>
struct Representation<float> : FloatingRepresentation {};
template <>
struct Representation<double> : FloatingRepresentation {};
template <>
struct Representation<bool> {
  static void fill(bool v, ParamRepr& r);
};
template <>
struct Representation<std::string> {
  static void fill(const std::string& v, ParamRepr& r);
};
template <>
struct Representation<runtime::Tensor> {
  static void fill(const runtime::Tensor& v, ParamRepr& r);
};
template <>
struct Representation<ModelRef> {
  static void fill(const ModelRef& v, ParamRepr& r);
};
// Shared ownership is common for big parameters; the representation is the pointee's.
template <class T>
struct Representation<std::shared_ptr<T>> {
  static void fill(const std::shared_ptr<T>& v, ParamRepr& r) {
    if (v) Representation<std::remove_const_t<T>>::fill(*v, r);
  }
};

// One parameter value: the object (for the benchmark body) and how to represent it (for the
// record). Copies share the object, so move-only values (tensors) work too.
class Param {
 public:
  template <class T>
  Param(std::string name, T value)
      : name_(std::move(name)),
        value_(std::make_shared<T>(std::move(value))),
        type_(&typeid(T)),
        represent_(&represent_as<T>),
        cache_(std::make_shared<std::optional<ParamRepr>>()) {}
  // String literals are strings.
  Param(std::string name, const char* value) : Param(std::move(name), std::string(value)) {}

  const std::string& name() const { return name_; }
  // Throws footprint::Error when the value is not a T (or was released).
  template <class T>
  const T& get() const {
    check_type(typeid(T));
    return *static_cast<const T*>(value_.get());
  }
  // Computed once per value and shared by the copies (hashing a large model's file is not free);
  // the name is this copy's.
  ParamRepr represent() const;
  // The same object under another name.
  Param renamed(std::string name) const {
    Param p = *this;
    p.name_ = std::move(name);
    return p;
  }
  // Drops this copy's share of the object.
  void release() { value_.reset(); }
  bool released() const { return value_ == nullptr; }

 private:
  template <class T>
  static ParamRepr represent_as(const std::string& name, const void* v) {
    ParamRepr r;
    r.name = name;
    Representation<T>::fill(*static_cast<const T*>(v), r);
    return r;
  }
  void check_type(const std::type_info& wanted) const;
  std::string name_;
  std::shared_ptr<const void> value_;
  const std::type_info* type_;
  ParamRepr (*represent_)(const std::string&, const void*);
  std::shared_ptr<std::optional<ParamRepr>> cache_;
};

// Short text of a representation for benchmark names: the value for scalars, else
// "tensor<float[2,3]>" / the model's file stem.
std::string short_text(const ParamRepr& r);

}  // namespace footprint::bench
