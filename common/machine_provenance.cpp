#include "common/machine_provenance.hpp"

#include <stdexcept>

#include "common/sha256.hpp"

namespace tilesim {

namespace {

// "chip.num_tiles" as a JSON pointer, "/chip/num_tiles" (machine-file keys hold no '.', '/' or '~').
nlohmann::json::json_pointer pointer_of(const std::string& path) {
  std::string p = "/" + path;
  for (auto& c : p)
    if (c == '.') c = '/';
  return nlohmann::json::json_pointer(p);
}

}  // namespace

MachineProvenance::MachineProvenance(std::vector<std::string> files, std::map<std::string, std::string> stated_in)
    : files_(std::move(files)), stated_in_(std::move(stated_in)) {}

const std::string& MachineProvenance::file_stating(const std::string& path) const {
  auto it = stated_in_.find(path);
  if (it != stated_in_.end()) return it->second;
  static const std::string none;
  return files_.empty() ? none : files_.front();
}

void MachineProvenance::record(const std::string& path, nlohmann::json value, const std::string& source) {
  figures_.push_back({path, std::move(value), source, file_stating(path)});
}

void MachineProvenance::append(const MachineProvenance& other) {
  for (const auto& f : other.files_) files_.push_back(f);
  for (const auto& f : other.figures_) figures_.push_back(f);
}

const MachineFigure& MachineProvenance::figure(const std::string& path) const {
  for (const auto& f : figures_)
    if (f.path == path) return f;
  throw std::out_of_range("machine provenance: no figure " + path);
}

MachineFigure& MachineProvenance::figure(const std::string& path) {
  return const_cast<MachineFigure&>(static_cast<const MachineProvenance&>(*this).figure(path));
}

bool MachineProvenance::has(const std::string& path) const {
  for (const auto& f : figures_)
    if (f.path == path) return true;
  return false;
}

nlohmann::json MachineProvenance::figures_json(bool with_files) const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : figures_) {
    nlohmann::json entry = {{"value", f.value}, {"source", f.source}};
    if (with_files) entry["file"] = f.file;
    out[pointer_of(f.path)] = entry;
  }
  return out;
}

std::string MachineProvenance::content_hash() const { return "sha256:" + sha256_hex(figures_json().dump()); }

nlohmann::json MachineProvenance::to_json() const {
  return {{"files", files_}, {"figures", figures_json(true)}, {"content_hash", content_hash()}};
}

}  // namespace tilesim
