// The torch-cpu backend in a build without libtorch: it says so, and how to get it.
#include "common/error.hpp"
#include "kernels/torch/torch_backend.hpp"

namespace tilesim::kernels::torch_peer {

bool built_in() { return false; }

std::string description() { return "not built: CMake found no libtorch; install libtorch-dev and rebuild"; }

std::unique_ptr<Backend> make_backend() {
  throw InputError(
      "backend torch-cpu: this tilesim was built without libtorch. Install Debian's libtorch-dev "
      "(scripts/install-deps.sh does) and rebuild (make build); `tilesim --version` lists the backends built in");
}

}  // namespace tilesim::kernels::torch_peer
