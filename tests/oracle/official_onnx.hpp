#pragma once
// The official ONNX library (Debian libonnx-dev), test-only: its headers warn under our flags,
// so they are included here once with those warnings off.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#pragma GCC diagnostic pop

namespace footprint::testing {
// Where Debian's libonnx-testdata puts the ONNX backend test models.
inline constexpr const char* kOnnxTestData = "/usr/share/libonnx-testdata/data";
}  // namespace footprint::testing
