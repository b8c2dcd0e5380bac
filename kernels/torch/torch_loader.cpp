// torch-cpu in the tilesim command: the backend and libtorch live in a plugin module, loaded on first
// use (see kernels/CMakeLists.txt for why). Found where the build put it, else beside the executable.
#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "common/error.hpp"
#include "kernels/torch/torch_backend.hpp"

namespace tilesim::kernels::torch_peer {
namespace {

using MakeBackend = Backend* (*)();

std::string beside_executable() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : (exe.parent_path() / TILESIM_TORCH_PLUGIN_NAME).string();
}

// The plugin's factory; the module stays loaded for the life of the process (unloading libtorch would
// run its static destructors while its threads may still exist).
MakeBackend load_factory() {
  static MakeBackend factory = nullptr;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    for (const std::string& path : {std::string(TILESIM_TORCH_PLUGIN), beside_executable()}) {
      if (path.empty()) continue;
      void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (module == nullptr) {
        tried += "\n  " + path + ": " + dlerror();
        continue;
      }
      factory = reinterpret_cast<MakeBackend>(dlsym(module, "tilesim_torch_make_backend"));
      if (factory != nullptr) return;
      tried += "\n  " + path + ": no tilesim_torch_make_backend in it";
    }
    error = tried;
  });
  if (factory == nullptr)
    throw InputError("backend torch-cpu: its plugin " + std::string(TILESIM_TORCH_PLUGIN_NAME) +
                     " could not be loaded (rebuild with make build, and keep it beside the tilesim executable):" + error);
  return factory;
}

}  // namespace

bool built_in() { return true; }

std::string description() { return std::string("libtorch ") + TILESIM_TORCH_VERSION + " (ATen), loaded on use"; }

std::unique_ptr<Backend> make_backend() { return std::unique_ptr<Backend>(load_factory()()); }

}  // namespace tilesim::kernels::torch_peer
