#pragma once
// Errors footprint reports to its callers.
//
// Every failure the user can cause (a bad model, a bad input file, a bad flag) surfaces as one of
// these, carrying a single line that names what was wrong and where. The CLI maps UsageError to
// exit code 2 and every other Error to exit code 1.
#include <stdexcept>
#include <string>
#include <string_view>

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

// `text` from a file, made safe for a one-line message: quoted, control and non-ASCII bytes
// escaped as \xNN, and cut after 80 bytes.
std::string in_quotes(std::string_view text);
// The same escaping without the quotes (for op types and other short identifiers).
std::string printable(std::string_view text);

}  // namespace footprint
