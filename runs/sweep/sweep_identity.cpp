#include "runs/sweep/sweep_identity.hpp"

#include <filesystem>

#include "common/error.hpp"
#include "common/sha256.hpp"
#include "common/strict_json.hpp"

namespace tilesim::runs::sweep {

namespace fs = std::filesystem;

std::string spec_sha256(const nlohmann::json& resolved_spec) { return sha256_hex(resolved_spec.dump()); }

namespace {

// The top-level keys in which two resolved sweeps differ, for the message.
std::string differing_keys(const nlohmann::json& a, const nlohmann::json& b) {
  std::string keys;
  auto note = [&keys](const std::string& k) { keys += (keys.empty() ? "" : ", ") + k; };
  for (const auto& [k, v] : a.items())
    if (!b.contains(k) || b[k] != v) note(k);
  for (const auto& [k, v] : b.items())
    if (!a.contains(k)) note(k);
  return keys.empty() ? "none" : keys;
}

// A resolved sweep with its "source_file" replaced by the canonical path, so that two names of one
// file compare equal.
nlohmann::json with_canonical_source(nlohmann::json spec, const std::string& canonical) {
  if (spec.is_object() && spec.contains("source_file")) spec["source_file"] = canonical;
  return spec;
}

// The canonical sweep file a recorded sweep.json names: what the run recorded, or (a sweep.json from
// before it was recorded) its source_file resolved from this working directory.
std::string recorded_canonical_source(const nlohmann::json& recorded) {
  if (recorded.contains("run") && recorded["run"].is_object() && recorded["run"].contains("source_file_canonical") &&
      recorded["run"]["source_file_canonical"].is_string())
    return recorded["run"]["source_file_canonical"].get<std::string>();
  if (recorded.contains("source_file") && recorded["source_file"].is_string())
    return canonical_sweep_file(recorded["source_file"].get<std::string>());
  return "";
}

}  // namespace

std::string canonical_sweep_file(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return path;
  const fs::path canonical = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal().string() : canonical.string();
}

void check_same_sweep(const std::string& out_dir, const nlohmann::json& resolved_spec) {
  const std::string path = (fs::path(out_dir) / "sweep.json").string();
  const std::string advice = " (resume with the same sweep file and options, or give another --out)";
  if (!fs::is_regular_file(path))
    throw InputError(path, "", "the sweep.json that says which sweep the folder's results.csv belongs to" + advice,
                     "none");
  const nlohmann::json recorded = load_json_file(path);
  if (!recorded.is_object()) throw InputError(path, "", "the sweep.json tilesim sweep writes" + advice, "another document");
  nlohmann::json recorded_spec = recorded;
  recorded_spec.erase("tool");
  recorded_spec.erase("run");
  const std::string ours = spec_sha256(resolved_spec);
  std::string theirs = spec_sha256(recorded_spec);
  if (recorded.contains("run") && recorded["run"].is_object() && recorded["run"].contains("spec_sha256") &&
      recorded["run"]["spec_sha256"].is_string())
    theirs = recorded["run"]["spec_sha256"].get<std::string>();
  // The same file named another way (./s.json, an absolute path, a path from another directory) is the
  // same sweep, and the same name from another directory (s.json there) another one: the specs are
  // compared with each side's sweep file made canonical, whatever their hashes of the names as written say.
  const std::string our_source = resolved_spec.contains("source_file") && resolved_spec["source_file"].is_string()
                                     ? canonical_sweep_file(resolved_spec["source_file"].get<std::string>()) : "";
  const std::string their_source = recorded_canonical_source(recorded);
  if (theirs == ours && our_source == their_source) return;
  const nlohmann::json ours_canonical = with_canonical_source(resolved_spec, our_source);
  const nlohmann::json theirs_canonical = with_canonical_source(recorded_spec, their_source);
  if (ours_canonical == theirs_canonical) return;
  const std::string name = recorded_spec.contains("name") && recorded_spec["name"].is_string()
                               ? recorded_spec["name"].get<std::string>() : "?";
  throw InputError(path, "", "the same sweep as this one (resolved spec sha256 " + ours.substr(0, 12) + ")" + advice,
                   "the folder holds sweep \"" + name + "\" (sha256 " + theirs.substr(0, 12) +
                       "), differing in: " + differing_keys(theirs_canonical, ours_canonical));
}

}  // namespace tilesim::runs::sweep
