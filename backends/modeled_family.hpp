#pragma once
// The shared base of the families whose names carry a machine (ipu, gpu-model, cpu-model):
// FAMILY[:MACHINE][:MODE]. The machine is a shipped name or a machine file path, the family's default
// when left out; a what-if machine's "{PATH=V}" overrides are part of its text and are read when the
// machine file is loaded (common/machine_overrides.hpp), not here. A trailing ":MODE" is one of the
// family's declared modes (FamilyInfo::modes), its default mode when left out. A family says only
// what differs: its default machine and whether a mode alone names the default machine.
#include <string>

#include "backends/backend_family.hpp"

namespace tilesim::backends {

class ModeledFamily : public BackendFamily {
 public:
  // `default_machine`: the machine of a name without one ("ipu" runs on "bow").
  ModeledFamily(FamilyInfo info, std::string default_machine);

  // A name the grammar refuses ("ipu:", "gpu-model:eager") is an InputError for --backends that lists
  // every family's names (`accepted_by_all`).
  BackendSpec parse(const std::string& item, const std::string& accepted_by_all) const final;

 protected:
  const std::string& default_machine() const { return default_machine_; }
  // The machine part of a MachineChoice: named in the backend name, a file path accepted, the default
  // machine; a family adds its shipped machines.
  MachineChoice named_machine_choice() const;
  // Removes a trailing ":MODE" naming one of the family's modes from `machine_and_mode` and returns
  // that mode, "" when it names none. Only the last ':'-field can be a mode, so a machine file path may
  // hold ':' itself; since no mode holds ':', at most one mode matches and the modes' order is moot.
  std::string take_mode(std::string& machine_and_mode) const;

  // Whether FAMILY:MODE is the default machine in that mode ("ipu:static" = "ipu:bow:static"). When
  // false (the default), a mode's name where the machine belongs is refused ("gpu-model:eager"), so
  // that a mistyped name is not read as a machine file called "eager".
  virtual bool mode_alone_names_default_machine() const { return false; }

 private:
  bool is_mode(const std::string& text) const;

  std::string default_machine_;
};

}  // namespace tilesim::backends
