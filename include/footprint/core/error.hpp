#pragma once
// Errors footprint reports to its callers.
//
// Every failure the user can cause (a bad model, a bad input file, a bad flag) surfaces as one of
// these, carrying a single line that names what was wrong and where. The CLI maps UsageError to
// exit code 2 and every other Error to exit code 1.
#include <stdexcept>
#include <string>

namespace footprint {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The command line or an API argument was malformed (not the model).
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace footprint
