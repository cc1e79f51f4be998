// `python3 -m footprint ...`: the footprint command line, run in this process.
#include <pybind11/stl.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "commands.hpp"

namespace footprint::python {

void bind_cli(py::module_& m) {
  m.def(
      "_cli",
      [](std::vector<std::string> args) {
        std::vector<char*> argv;
        argv.reserve(args.size() + 1);
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const py::gil_scoped_release nogil;
        const int rc = cli::run_command_line(static_cast<int>(args.size()), argv.data());
        // The command prints with C stdio; Python's own streams are flushed by the caller.
        std::fflush(stdout);
        std::fflush(stderr);
        return rc;
      },
      py::arg("argv"), "Runs the footprint command line (argv[0] is the program name).");
}

}  // namespace footprint::python
