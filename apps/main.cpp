// tilesim: the command-line executable. Everything it does is in apps/dispatch.cpp (run_cli), shared
// with the Python module.
#include "apps/commands.hpp"

int main(int argc, char** argv) { return tilesim::cli::run_cli(argc, argv); }
