#pragma once
// What a model read from its machine file, kept after parsing: each figure's JSON path, the value the
// model uses, its source and the file that states it (the machine file or one of its bases), and the
// files read. Filled by FigureReader as it reads, so a report shows exactly what the model used, and
// hashed so two results can be told apart (or matched) by the machine that produced them.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tilesim {

struct MachineFigure {
  std::string path;      // "chip.sync_cycles"
  nlohmann::json value;  // as the model uses it: an integer or a number
  std::string source;
  std::string file;      // the file that states it
};

class MachineProvenance {
 public:
  MachineProvenance() = default;
  // `files`: the machine file first, then its base, its base's base, ...; `stated_in`: the file that
  // states each JSON path of an inherited document (empty when nothing is inherited).
  MachineProvenance(std::vector<std::string> files, std::map<std::string, std::string> stated_in);

  const std::vector<std::string>& files() const { return files_; }
  const std::vector<MachineFigure>& figures() const { return figures_; }

  // The file that states a JSON path ("chip.num_tiles", "fit_carried_over_from"): the machine file
  // unless a base states it.
  const std::string& file_stating(const std::string& path) const;

  void record(const std::string& path, nlohmann::json value, const std::string& source);
  // Appends another file's figures and files (an IPU system adds its chip file's).
  void append(const MachineProvenance& other);

  // The figure at a JSON path; throws std::out_of_range when the model read no such figure.
  const MachineFigure& figure(const std::string& path) const;
  MachineFigure& figure(const std::string& path);
  bool has(const std::string& path) const;

  // The figures as nested objects, like the machine file: {"chip": {"num_tiles": {"value": 1472,
  // "source": "..."}}}; with `with_files`, each figure also names the file that states it.
  nlohmann::json figures_json(bool with_files = false) const;
  // "sha256:" and the hex SHA-256 of figures_json() in its canonical form (keys sorted, no spaces):
  // values and sources only, so the same machine hashes the same in every checkout.
  std::string content_hash() const;
  // {"files": [...], "figures": figures_json(true), "content_hash": "sha256:..."}: what reports carry.
  nlohmann::json to_json() const;

 private:
  std::vector<std::string> files_;
  std::map<std::string, std::string> stated_in_;
  std::vector<MachineFigure> figures_;
};

}  // namespace tilesim
