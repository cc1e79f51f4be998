// The footprint command (src/cli/command_line.cpp has its arguments and exit codes).
#include "commands.hpp"

int main(int argc, char** argv) {
  return footprint::cli::run_command_line(argc, argv);
}
