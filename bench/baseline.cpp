#include "bench/baseline.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/host_info.hpp"
#include "common/strict_json.hpp"

namespace tilesim::bench {

namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string time_text(double s) {
  char text[32];
  if (s < 1e-3) std::snprintf(text, sizeof text, "%9.1f us", s * 1e6);
  else std::snprintf(text, sizeof text, "%9.2f ms", s * 1e3);
  return text;
}

}  // namespace

std::map<std::string, double> load_baseline(const std::string& path) {
  const nlohmann::json document = load_json_file(path);
  ObjectReader root(document, path, "");
  root.ignore("host_cpu");
  root.ignore("saved_utc");
  root.ignore("notes");
  ObjectReader seconds = root.object("seconds_per_call");
  std::map<std::string, double> baseline;
  for (const auto& [name, value] : document.at("seconds_per_call").items()) {
    (void)value;
    baseline[name] = seconds.positive_number(name);
  }
  seconds.finish();
  root.finish();
  return baseline;
}

void save_baseline(const std::string& path, const std::vector<BaselineEntry>& entries) {
  nlohmann::json document;
  document["notes"] =
      "Simulator-speed baseline for `make bench-sim`: wall seconds per call of each benchmark, measured on the "
      "host named here. Replace it with `make bench-sim SAVE=1` when a change to the simulator's speed is intended.";
  document["host_cpu"] = host_cpu_model_name();
  document["saved_utc"] = utc_now();
  document["seconds_per_call"] = nlohmann::json::object();
  for (const auto& e : entries) document["seconds_per_call"][e.name] = e.seconds_per_call;
  std::ofstream out(path, std::ios::trunc);
  out << document.dump(2) << "\n";
  out.flush();
  if (!out) throw InputError(path, "", "a writable baseline file", "it cannot be written");
}

std::string baseline_table(const std::map<std::string, double>& baseline, const std::vector<BaselineEntry>& now,
                           const std::string& baseline_path) {
  std::string table = "\nAgainst the baseline " + baseline_path + " (change > 0: slower now)\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-58s %12s %12s %9s\n", "benchmark", "baseline", "now", "change");
  table += line;
  std::map<std::string, bool> seen;
  for (const auto& e : now) {
    const auto it = baseline.find(e.name);
    if (it == baseline.end()) {
      std::snprintf(line, sizeof line, "%-58s %12s %12s %9s\n", e.name.c_str(), "(none)", time_text(e.seconds_per_call).c_str(), "new");
    } else {
      const double change_pct = 100.0 * (e.seconds_per_call - it->second) / it->second;
      std::snprintf(line, sizeof line, "%-58s %12s %12s %+8.1f%%\n", e.name.c_str(), time_text(it->second).c_str(),
                    time_text(e.seconds_per_call).c_str(), change_pct);
      seen[e.name] = true;
    }
    table += line;
  }
  for (const auto& [name, seconds] : baseline) {
    if (seen.count(name)) continue;
    std::snprintf(line, sizeof line, "%-58s %12s %12s %9s\n", name.c_str(), time_text(seconds).c_str(), "(not run)", "");
    table += line;
  }
  return table;
}

}  // namespace tilesim::bench
