#include "workloads/sweep_options.hpp"

#include "common/error.hpp"
#include "common/limits.hpp"

namespace tilesim::analysis {

std::string read_sweep_name(ObjectReader& root) {
  const std::string name = root.string("name");
  bool valid = !name.empty() && name.size() <= 255 && name != "." && name != "..";
  for (char c : name)
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-');
  if (!valid)
    throw InputError(root.file(), "name",
                     "a name of 1 to 255 letters, digits, '.', '_' or '-' (not \".\" or \"..\"; it names the output folder)",
                     describe_json(name));
  return name;
}

void read_sweep_run_options(ObjectReader& root, SweepRunOptions& options) {
  if (root.has("ipu")) {
    ObjectReader ipu = root.object("ipu");
    if (ipu.has("verify")) options.ipu_verify = ipu.boolean("verify");
    ipu.finish();
  }
  if (root.has("cpu")) {
    ObjectReader cpu = root.object("cpu");
    options.cpu_warmup = static_cast<int>(cpu.integer_or("warmup", 0, limits::max_warmup_calls, options.cpu_warmup));
    options.cpu_timed_calls = static_cast<int>(cpu.integer_or("timed_calls", 1, limits::max_timed_calls, options.cpu_timed_calls));
    cpu.finish();
  }
}

}  // namespace tilesim::analysis
