// tilesim: the command-line executable. Everything it does is in apps/dispatch.cpp (run_cli), shared
// with the Python module.
#include "apps/commands.hpp"
#include "kernels/cpu/openblas_coretype.hpp"

// OpenBLAS (the torch-cpu peer's BLAS) picks its kernels when it loads, before main: the core is set from
// cpuid first, so a virtual machine's masked CPU model cannot leave the peer on generic kernels.
TILESIM_SELECT_OPENBLAS_CORETYPE_AT_LOAD

int main(int argc, char** argv) { return tilesim::cli::run_cli(argc, argv); }
