// The torch-cpu plugin's entry point: the tilesim command dlopen()s this module (and with it libtorch)
// only when torch-cpu is asked for. C linkage, so the loader finds it by a plain name.
#include "kernels/torch/torch_backend.hpp"

extern "C" __attribute__((visibility("default"))) tilesim::Backend* tilesim_torch_make_backend() {
  return tilesim::kernels::torch_peer::make_backend().release();
}
