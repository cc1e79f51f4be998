#include "footprint/bench/param.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "footprint/bench/content_hash.hpp"
#include "footprint/core/dtype.hpp"
#include "footprint/core/error.hpp"

namespace footprint::bench {

void fill_floating(double v, ParamRepr& r) {
  r.type = "float";
  r.value = fmt::format("{}", v);  // shortest text that reads back the same
}

void Representation<bool>::fill(bool v, ParamRepr& r) {
  r.type = "bool";
  r.value = v ? "true" : "false";
}

void Representation<std::string>::fill(const std::string& v, ParamRepr& r) {
  r.type = "string";
  r.value = v;
}

void Representation<runtime::Tensor>::fill(const runtime::Tensor& v, ParamRepr& r) {
  r.type = "tensor";
  r.dtype = std::string(dtype_name(v.dtype()));
  r.shape = v.dims();
  r.bytes = v.bytes();
  r.hash = content_hash({v.data(), v.bytes()});
}

void Representation<ModelRef>::fill(const ModelRef& v, ParamRepr& r) {
  r.type = "model";
  r.source = v.path.string();
  r.bytes = std::filesystem::file_size(v.path);
  r.hash = file_content_hash(v.path);
}

void Param::check_type(const std::type_info& wanted) const {
  if (value_ == nullptr) throw Error("benchmark parameter '" + name_ + "' was released");
  if (wanted != *type_)
    throw Error("benchmark parameter '" + name_ + "' is read as another type than it was given");
}

ParamRepr Param::represent() const {
  if (!*cache_) {
    if (value_ == nullptr) throw Error("benchmark parameter '" + name_ + "' was released");
    *cache_ = represent_(name_, value_.get());
  }
  ParamRepr r = **cache_;
  r.name = name_;
  return r;
}

std::string short_text(const ParamRepr& r) {
  if (r.type == "model") return std::filesystem::path(r.source).parent_path().filename().string();
  if (r.type == "tensor") {
    std::string dims;
    for (int64_t d : r.shape) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    return "tensor<" + r.dtype + "[" + dims + "]>";
  }
  if (!r.value.empty() || r.type == "string") return r.value;
  return r.type;
}

}  // namespace footprint::bench
