#pragma once
// numpy arrays and the library's element types.
#include <pybind11/numpy.h>

#include <string>

#include "footprint/core/dtype.hpp"

namespace footprint::python {

// The ONNX dtype of a numpy dtype; footprint::UsageError naming `what` for one footprint does not
// run (complex, strings, objects).
DType dtype_of(const pybind11::dtype& d, const std::string& what);
// The numpy dtype of an ONNX one; footprint::Error naming `what` for one numpy lacks (bfloat16,
// the float8 and 4-bit types).
pybind11::dtype numpy_dtype(DType t, const std::string& what);
// `array` in native byte order: numpy may hold big-endian data (dtype ">f4"), which every reader
// here takes as native; such an array is converted (a copy), any other returned as it is.
pybind11::array native_order(const pybind11::array& array);

}  // namespace footprint::python
