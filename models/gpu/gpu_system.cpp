#include "models/gpu/gpu_system.hpp"

#include <filesystem>

#include "common/error.hpp"
#include "common/machine_files.hpp"
#include "common/machine_inheritance.hpp"
#include "common/strict_json.hpp"

namespace tilesim::gpu {

namespace {

void check_system_base(const nlohmann::json& document, const std::string& file) {
  parse_resolved_gpu_system(MachineDocument{document, {file}, {}});
}

}  // namespace

GpuSystem parse_resolved_gpu_system(const MachineDocument& resolved) {
  const std::string& file = resolved.files.front();
  ObjectReader root(resolved.document, file, "");
  GpuSystem s;
  s.file = file;
  s.provenance = MachineProvenance(resolved.files, resolved.stated_in);
  s.name = root.string("name");
  s.description = root.string("description");
  root.string_or("notes", "");

  // The device file, relative to the file that names it (which may be a base of this one).
  const std::string device_name = root.string("device_file");
  const std::string& naming_file = s.provenance.file_stating("device_file");
  const std::filesystem::path device_path = std::filesystem::path(naming_file).parent_path() / device_name;
  const std::string unreadable = unreadable_file_reason(device_path.string());
  if (!unreadable.empty())
    throw InputError(naming_file, root.path_of("device_file"), "a GPU machine file (path relative to this file)",
                     "\"" + device_name + "\" (" + device_path.string() + ": " + unreadable + ")");
  if (is_gpu_system_file(device_path.string()))
    throw InputError(naming_file, root.path_of("device_file"), "a single-GPU machine file", "\"" + device_name + "\", itself a system file");
  s.device = load_gpu_machine(device_path.string());

  FigureReader sys(root.object("system"), s.provenance);
  s.num_gpus = static_cast<std::int32_t>(sys.integer("num_gpus", 1, 1 << 16));
  s.gpus_per_node = static_cast<std::int32_t>(sys.integer("gpus_per_node", 1, 1 << 10));
  if (s.num_gpus % s.gpus_per_node != 0)
    throw InputError(file, "system.num_gpus.value", "a multiple of gpus_per_node (" + std::to_string(s.gpus_per_node) + ": whole nodes)",
                     std::to_string(s.num_gpus));
  s.nvlink_bytes_per_s = sys.number("nvlink_bytes_per_s", 1e6, 1e15);
  s.nvlink_step_latency_s = sys.number("nvlink_step_latency_s", 0.0, 1.0);
  s.network_bytes_per_s_per_node = sys.number("network_bytes_per_s_per_node", 1e6, 1e15);
  s.network_step_latency_s = sys.number("network_step_latency_s", 0.0, 1.0);
  sys.finish();
  root.finish();
  return s;
}

GpuMachine one_gpu_of(const GpuSystem& system) {
  GpuMachine gpu = system.device;
  gpu.description = "one GPU of " + system.name + " (" + std::to_string(system.num_gpus) + " GPUs): " + gpu.description;
  return gpu;
}

bool is_gpu_system_document(const nlohmann::json& document) { return document.is_object() && document.contains("device_file"); }

bool is_gpu_system_file(const std::string& name_or_path) {
  const std::string path = names_a_file(name_or_path) ? name_or_path : gpu_machine_dir() + "/" + name_or_path + ".json";
  try {
    // The chain alone, unchecked: the machine or system reader checks every file strictly afterwards.
    const auto unchecked = [](const nlohmann::json&, const std::string&) {};
    return is_gpu_system_document(read_machine_document(path, gpu_machine_dir(), "GPU", unchecked).document);
  } catch (const InputError&) {
    return false;
  }
}

GpuSystem parse_gpu_system(const nlohmann::json& document, const std::string& file) {
  return parse_resolved_gpu_system(resolve_machine_document(document, file, gpu_machine_dir(), "GPU system", check_system_base));
}

GpuSystem load_gpu_system(const std::string& name_or_path) {
  std::string path = name_or_path;
  if (!names_a_file(name_or_path)) {
    path = gpu_machine_dir() + "/" + name_or_path + ".json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw InputError("unknown GPU system \"" + name_or_path + "\": expected " +
                       shipped_names_text(shipped_gpu_systems(), gpu_machine_dir(), "TILESIM_GPU_MACHINE_DIR") +
                       " or a path to a system file (*.json)");
    }
  }
  const MachineDocument resolved = read_machine_document(path, gpu_machine_dir(), "GPU system", check_system_base);
  if (!is_gpu_system_document(resolved.document))
    throw InputError(path, "device_file", "a GPU system file (it names the \"device_file\" of its GPUs)", "a single-GPU machine file");
  return parse_resolved_gpu_system(resolved);
}

std::vector<std::string> shipped_gpu_systems() {
  std::vector<std::string> systems;
  for (const auto& stem : json_file_stems(gpu_machine_dir())) {
    // An unreadable file is reported when it is loaded, not when names are listed.
    if (is_gpu_system_file(gpu_machine_dir() + "/" + stem + ".json")) systems.push_back(stem);
  }
  return systems;
}

}  // namespace tilesim::gpu
