#pragma once
// `footprint run --check-shapes`: every value's dtype, extents and bytes as analysis predicts
// them (the program `analyze` builds, at the dims and input extents the session bound) against
// what the session ran with (the extents its runner gave each value's tensor, the bytes its plan
// held for it). Prediction and run follow one semantics (DESIGN.md), so any difference is a bug
// in one of them: the first one is named.
//
//   const runtime::ShapeCheck c = runtime::check_shapes(predicted, session);
//   if (!c.difference.empty()) fail(c.difference);  // "value 'x': predicted float[1,8], ran ..."
#include <string>

#include "footprint/analysis/model_program.hpp"
#include "footprint/runtime/session.hpp"

namespace footprint::runtime {

struct ShapeCheck {
  size_t values = 0;       // compared
  std::string difference;  // the first, naming the value; empty when every value agrees
};

// `session` has been prepared; `predicted` was built from the same model.
ShapeCheck check_shapes(const analysis::ModelProgram& predicted, const Session& session);

}  // namespace footprint::runtime
