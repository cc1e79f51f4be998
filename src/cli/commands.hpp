#pragma once
// One function per subcommand: each registers its flags on the app and runs from the callback.
#include <CLI/CLI.hpp>

namespace footprint::cli {

// Parses argv (argv[0] is the program), runs the subcommand and returns the exit code: 0, 1 for
// a model or input that cannot be processed, 2 for bad usage. Errors are one line on stderr.
int run_command_line(int argc, char** argv);

void add_info_command(CLI::App& app);
void add_analyze_command(CLI::App& app);
void add_fit_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_history_command(CLI::App& app);
void add_fold_command(CLI::App& app);
void add_conformance_command(CLI::App& app);

}  // namespace footprint::cli
