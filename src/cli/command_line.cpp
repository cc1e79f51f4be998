// The footprint command line, shared by the executable (main.cpp) and `python3 -m footprint`:
// parses the arguments and maps failures to exit codes (2: bad usage, 1: a model or input that
// cannot be processed).
#include <cstdio>
#include <new>
#include <string>

#include "commands.hpp"
#include "footprint/core/error.hpp"
#include "footprint/version.hpp"

namespace footprint::cli {

// NOLINTNEXTLINE(bugprone-exception-escape): only CLI11's setup could throw, before any input.
int run_command_line(int argc, char** argv) {
  CLI::App app{
      "footprint: predicts, plans, measures and shrinks the memory footprint of neural-network "
      "models (ONNX)."};
  app.name("footprint");
  app.set_version_flag("--version", "footprint " + std::string(kVersion));
  app.require_subcommand(1, 1);
  add_info_command(app);
  add_analyze_command(app);
  add_fit_command(app);
  add_plan_command(app);
  add_report_command(app);
  add_run_command(app);
  add_bench_command(app);
  add_compare_command(app);
  add_history_command(app);
  add_fold_command(app);
  add_conformance_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "footprint: error: %s (see footprint --help)\n", e.what());
    return 2;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "footprint: error: %s\n", e.what());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "footprint: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "footprint: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "footprint: error: internal: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace footprint::cli
