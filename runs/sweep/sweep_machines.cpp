#include "runs/sweep/sweep_machines.hpp"

#include <filesystem>

#include "common/atomic_file.hpp"
#include "common/tool_identity.hpp"

namespace tilesim::runs::sweep {

void write_sweep_machines(const std::string& out_dir, const std::vector<const Backend*>& backends) {
  nlohmann::json record = {{"tool", tool_identity()}, {"backends", nlohmann::json::array()}};
  for (const Backend* b : backends)
    record["backends"].push_back({{"backend", b->name()}, {"machine_provenance", b->machine_provenance()}});
  write_file_atomically((std::filesystem::path(out_dir) / "machines.json").string(), record.dump(2) + "\n");
}

}  // namespace tilesim::runs::sweep
