// A model including a kernel: the layer rule's own test (tests/CMakeLists.txt) expects the check to fail here.
#include "kernels/cpu/gather_scatter.hpp"
