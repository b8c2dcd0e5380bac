// Machine files as resolved: a derived file inherits from its base (common/machine_inheritance.hpp),
// every figure keeps its source and the file that states it (common/machine_provenance.hpp), the
// content hash follows the figures and nothing else, and reports and sweeps carry it all with the
// tool's git revision.
#include <cstdlib>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/machine_provenance.hpp"
#include "common/strict_json.hpp"
#include "common/tool_identity.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/ipu/ipu_fit.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "tests/support/test_support.hpp"

using namespace tilesim;
using tilesim_test::required_input_error_of;
using tilesim_test::TempDir;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

const ipu::IpuMachine& shipped_bow() {
  static const ipu::IpuMachine m = ipu::load_ipu_machine("bow");
  return m;
}

// A machine file deriving from the shipped Bow with `body` (JSON members after name and description).
std::string derived_from_bow(const TempDir& dir, const std::string& name, const std::string& body) {
  return dir.write(name + ".json", R"({"name": ")" + name + R"(", "description": "a test machine", "base": "bow")" +
                                       (body.empty() ? "" : ", " + body) + "}");
}

}  // namespace

TEST_CASE("a derived machine file states only what differs from its base", "[machine][inheritance][unit]") {
  TempDir dir("inheritance");
  const std::string fast =
      derived_from_bow(dir, "bow-fast", R"("chip": {"tile_clock_hz": {"value": 2e9, "source": "a faster part, for the test"}})");
  const ipu::IpuMachine m = ipu::load_ipu_machine(fast);
  const ipu::IpuMachine& bow = shipped_bow();
  CHECK(m.chip.name == "bow-fast");
  CHECK(m.chip.clock_hz == 2e9);
  // Everything else is the base's, value and source.
  CHECK(m.chip.num_tiles == bow.chip.num_tiles);
  CHECK(m.chip.sync_cycles == bow.chip.sync_cycles);
  CHECK(m.codelets.multislice_cycles_per_vector == bow.codelets.multislice_cycles_per_vector);
  CHECK(m.planner.objective_sync_cycles == bow.planner.objective_sync_cycles);
  CHECK(m.roofline.tile_sram_bytes_per_s == bow.roofline.tile_sram_bytes_per_s);
  CHECK(m.provenance.files() == std::vector<std::string>{fast, bow.file});
  CHECK(m.provenance.figure("chip.tile_clock_hz").file == fast);
  CHECK(m.provenance.figure("chip.tile_clock_hz").source == "a faster part, for the test");
  CHECK(m.provenance.figure("chip.sync_cycles").file == bow.file);
  CHECK(m.provenance.figure("chip.sync_cycles").source == bow.provenance.figure("chip.sync_cycles").source);
  CHECK(m.provenance.figures().size() == bow.provenance.figures().size());

  // A base named by a path relative to the file, and a chain of three files.
  const std::string faster = dir.write("sub/faster.json", R"({"name": "faster", "description": "d", "base": "../bow-fast.json",
      "planner": {"memory_fraction": {"value": 0.5, "source": "test"}}})");
  const ipu::IpuMachine f = ipu::load_ipu_machine(faster);
  CHECK(f.chip.clock_hz == 2e9);
  CHECK(f.planner.memory_fraction == 0.5);
  REQUIRE(f.provenance.files().size() == 3);
  CHECK(f.provenance.files().back() == bow.file);
  CHECK(f.provenance.figure("chip.tile_clock_hz").file == dir.path("sub/../bow-fast.json"));

  // GPU files follow the same rule.
  const std::string gpu = dir.write("a100-fast.json", R"({"name": "a100-fast", "description": "d", "base": "a100-40gb",
      "chip": {"hbm_bytes_per_s": {"value": 3e12, "source": "test"}}})");
  const gpu::GpuMachine g = gpu::load_gpu_machine(gpu);
  const gpu::GpuMachine a100 = gpu::load_gpu_machine("a100-40gb");
  CHECK(g.hbm_bytes_per_s == 3e12);
  CHECK(g.sm_count == a100.sm_count);
  CHECK(g.calibration.gather_elements_per_sm_cycle == a100.calibration.gather_elements_per_sm_cycle);
  CHECK(g.provenance.figure("kernels.dram_efficiency").file == a100.file);
}

TEST_CASE("derived machine files reject new keys, bad bases and cycles, naming the file and JSON path", "[machine][inheritance][unit]") {
  TempDir dir("inheritance_errors");
  // A key the base lacks (a typo would otherwise be a silent no-op).
  const std::string typo = derived_from_bow(dir, "typo", R"("chip": {"num_tile": {"value": 3, "source": "typo"}})");
  std::string message = required_input_error_of([&] { ipu::load_ipu_machine(typo); });
  CHECK_THAT(message, Contains(typo) && Contains("chip.num_tile") && Contains("unknown key") && Contains("bow.json"));
  const std::string section = derived_from_bow(dir, "section", R"("roofline_ceilings": {})");
  CHECK_THAT(required_input_error_of([&] { ipu::load_ipu_machine(section); }), Contains("roofline_ceilings"));
  // A section must stay a section.
  const std::string flat = derived_from_bow(dir, "flat", R"("codelets": 5)");
  CHECK_THAT(required_input_error_of([&] { ipu::load_ipu_machine(flat); }), Contains(flat) && Contains("codelets") && Contains("an object"));
  // The merged figure is still checked strictly.
  const std::string bare = derived_from_bow(dir, "bare", R"("chip": {"sync_cycles": 5})");
  CHECK_THAT(required_input_error_of([&] { ipu::load_ipu_machine(bare); }), Contains(bare) && Contains("chip.sync_cycles"));
  // A derived file names and describes its own machine.
  const std::string nameless = dir.write("nameless.json", R"({"description": "d", "base": "bow"})");
  CHECK_THAT(required_input_error_of([&] { ipu::load_ipu_machine(nameless); }), Contains(nameless) && Contains("name"));
  // An unknown base lists the shipped machines.
  const std::string unknown = dir.write("unknown.json", R"({"name": "u", "description": "d", "base": "bowx"})");
  CHECK_THAT(required_input_error_of([&] { ipu::load_ipu_machine(unknown); }),
             Contains(unknown) && Contains("base") && Contains("bowx") && Contains("bow, bow-2000, mk1, mk2"));
  // A base name the file system refuses (too long) is bad input too, not an internal error (found by
  // fuzzing), and so is such a machine name.
  const std::string too_long = dir.write("too-long.json", R"({"name": "l", "description": "d", "base": ")" + std::string(300, 'a') + R"("})");
  CHECK_THAT(required_input_error_of([&] { gpu::load_gpu_machine(too_long); }),
             Contains(too_long) && Contains("base") && Contains("File name too long"));
  CHECK_THAT(required_input_error_of([&] { ipu::load_ipu_machine(std::string(300, 'a')); }), Contains("unknown IPU machine"));
  CHECK_THAT(required_input_error_of([&] { gpu::load_gpu_machine(std::string(300, 'a')); }), Contains("unknown GPU machine"));
  // Cycles, of two files and of one.
  const std::string a = dir.write("a.json", R"({"name": "a", "description": "d", "base": "b.json"})");
  dir.write("b.json", R"({"name": "b", "description": "d", "base": "a.json"})");
  CHECK_THAT(required_input_error_of([&] { ipu::load_ipu_machine(a); }), Contains("base") && Contains("cycle") && Contains("b.json"));
  const std::string self = dir.write("self.json", R"({"name": "s", "description": "d", "base": "self.json"})");
  CHECK_THAT(required_input_error_of([&] { gpu::load_gpu_machine(self); }), Contains(self) && Contains("cycle"));
  // A fault in a base is reported against the base, not the file deriving from it.
  std::string bad_base_text = tilesim_test::slurp(shipped_bow().file);
  bad_base_text.replace(bad_base_text.find("\"value\": 1472"), 13, "\"value\": -1");
  const std::string bad_base = dir.write("bad-base.json", bad_base_text);
  const std::string child = dir.write("child.json", R"({"name": "c", "description": "d", "base": "bad-base.json"})");
  message = required_input_error_of([&] { ipu::load_ipu_machine(child); });
  CHECK_THAT(message, StartsWith(bad_base) && Contains("chip.num_tiles.value"));
}

TEST_CASE("shipped derived machines inherit exactly what they do not state", "[machine][inheritance][unit]") {
  const ipu::IpuMachine& bow = shipped_bow();
  // mk2 is the Bow's die at another clock: the fitted figures are the Bow's, from bow.json.
  const ipu::IpuMachine mk2 = ipu::load_ipu_machine("mk2");
  CHECK(mk2.provenance.files() == std::vector<std::string>{mk2.file, bow.file});
  for (const auto& p : ipu::default_ipu_fit_parameters()) {
    INFO(p.section << "." << p.key);
    CHECK(mk2.provenance.figure(p.section + "." + p.key).file == bow.file);
    CHECK(ipu::get_figure(mk2, p) == ipu::get_figure(bow, p));
  }
  CHECK(mk2.provenance.figure("chip.tile_clock_hz").file == mk2.file);
  // mk1 is fitted on nothing: it states every figure the Bow fit sets, so a refit of the Bow cannot move it.
  const ipu::IpuMachine mk1 = ipu::load_ipu_machine("mk1");
  for (const auto& p : ipu::default_ipu_fit_parameters()) {
    INFO(p.section << "." << p.key);
    CHECK(mk1.provenance.figure(p.section + "." + p.key).file == mk1.file);
    CHECK_THAT(mk1.provenance.figure(p.section + "." + p.key).source, !Contains("fitted"));
  }
  // A system lists its own file, then its chip file.
  const ipu::IpuMachine system = ipu::load_ipu_machine("bow-2000");
  CHECK(system.provenance.files() == std::vector<std::string>{system.file, bow.file});
  CHECK(system.provenance.figure("system.num_ipus").file == system.file);
  CHECK(system.provenance.figure("chip.num_tiles").file == bow.file);
  // h200 derives from h100-sxm, which carries the a100-40gb fit over.
  const gpu::GpuMachine h200 = gpu::load_gpu_machine("h200");
  const gpu::GpuMachine h100 = gpu::load_gpu_machine("h100-sxm");
  CHECK(h200.provenance.files() == std::vector<std::string>{h200.file, h100.file});
  CHECK(h200.fit_carried_over_from == "a100-40gb");
  CHECK(h200.provenance.file_stating("fit_carried_over_from") == h100.file);
  CHECK(h200.provenance.figure("chip.hbm_bytes_per_s").file == h200.file);
}

TEST_CASE("a machine's content hash follows its figures and nothing else", "[machine][provenance][unit]") {
  TempDir dir("hash");
  const ipu::IpuMachine& bow = shipped_bow();
  const std::string hash = bow.provenance.content_hash();
  CHECK_THAT(hash, StartsWith("sha256:"));
  CHECK(hash.size() == 7 + 64);
  CHECK(ipu::load_ipu_machine("bow").provenance.content_hash() == hash);
  // Another name, description and place: the same figures, the same hash.
  nlohmann::json copy = load_json_file(bow.file);
  copy["name"] = "bow-copy";
  copy["description"] = "the Bow, elsewhere";
  copy.erase("notes");
  CHECK(ipu::load_ipu_machine(dir.write("copy.json", copy.dump())).provenance.content_hash() == hash);
  // A derived file that restates nothing resolves to the same machine.
  CHECK(ipu::load_ipu_machine(derived_from_bow(dir, "same", "")).provenance.content_hash() == hash);
  // One figure's value, or one source, changes it.
  nlohmann::json changed = load_json_file(bow.file);
  changed["chip"]["sync_cycles"]["value"] = changed["chip"]["sync_cycles"]["value"].get<std::int64_t>() + 1;
  CHECK(ipu::parse_ipu_machine(changed, "changed.json").provenance.content_hash() != hash);
  changed = load_json_file(bow.file);
  changed["codelets"]["supervisor_cycles"]["source"] = "another source";
  CHECK(ipu::parse_ipu_machine(changed, "changed.json").provenance.content_hash() != hash);
  // The report form: every figure with value, source and file, the files read, the hash.
  const nlohmann::json j = bow.provenance.to_json();
  CHECK(j["content_hash"] == hash);
  CHECK(j["files"] == nlohmann::json::array({bow.file}));
  CHECK(j["figures"]["chip"]["num_tiles"]["value"] == 1472);
  CHECK(j["figures"]["chip"]["num_tiles"]["file"] == bow.file);
  CHECK(j["figures"]["roofline"]["peak_flops_per_s"]["float16"]["value"] == 350e12);
}

TEST_CASE("report.json, sweeps and --version carry the resolved machines and the git revision", "[machine][provenance][cli]") {
  TempDir dir("provenance_cli");
  const auto run = [&](const std::string& args) { return tilesim_test::run_tilesim(args, dir.dir()); };
  const std::string workload = dir.write("w.json", R"({"name": "w", "seed": 1, "ops": [
      {"op": "gather", "num_inputs": 64, "num_features": 16, "num_outputs": 128}]})");
  const std::string slower = derived_from_bow(dir, "bow-slower", R"("chip": {"sync_cycles": {"value": 900, "source": "test"}})");
  const std::string same = derived_from_bow(dir, "bow-same", "");
  const auto r = run("run " + workload + " --backends ipu:bow,ipu:" + slower + ",ipu:" + same +
                     ",gpu-model:a100-80gb,cpu --timing-only --repeats 1 --warmup 0 --json --out " + dir.path("out"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out);
  CHECK(report["tool"]["revision"].get<std::string>() == tool_revision());
  CHECK_FALSE(tool_revision().empty());
  const auto& results = report["results"];
  REQUIRE(results.size() == 5);
  const auto hash = [&](int b) { return results[b]["machine_provenance"]["content_hash"].get<std::string>(); };
  CHECK(hash(0) == shipped_bow().provenance.content_hash());
  CHECK(hash(1) != hash(0));  // one figure differs
  CHECK(hash(2) == hash(0));  // the same figures under another name
  CHECK(results[1]["machine_provenance"]["figures"]["chip"]["sync_cycles"]["value"] == 900);
  CHECK(results[1]["machine_provenance"]["files"] == nlohmann::json::array({slower, shipped_bow().file}));
  const auto& gpu = results[3]["machine_provenance"];
  CHECK(gpu["files"].size() == 2);
  CHECK(gpu["figures"]["kernels"]["dram_efficiency"]["file"] == gpu["files"][1]);
  CHECK_FALSE(results[4].contains("machine_provenance"));  // the measured CPU has no machine file

  const auto v = run("--version");
  CHECK_THAT(v.out, Contains("revision " + tool_revision()));

  const std::string sweep = dir.write("s.json", R"({"name": "s", "ops": ["gather"],
      "sizes": {"num_inputs": [16], "num_features": [16], "num_outputs": [32]},
      "backends": ["ipu:bow", "gpu-model:h200:eager"]})");
  const auto s = run("sweep " + sweep + " --out " + dir.path("sweep"));
  INFO(s.err);
  REQUIRE(s.exit_code == 0);
  CHECK(nlohmann::json::parse(tilesim_test::slurp(dir.path("sweep/sweep.json")))["tool"]["revision"] == tool_revision());
  const auto machines = nlohmann::json::parse(tilesim_test::slurp(dir.path("sweep/machines.json")));
  CHECK(machines["tool"]["revision"] == tool_revision());
  REQUIRE(machines["backends"].size() == 2);
  CHECK(machines["backends"][0]["backend"] == "ipu:bow");
  CHECK(machines["backends"][0]["machine_provenance"]["content_hash"] == shipped_bow().provenance.content_hash());
  CHECK(machines["backends"][1]["backend"] == "gpu-model:h200:eager");
  CHECK(machines["backends"][1]["machine_provenance"]["content_hash"] ==
        gpu::load_gpu_machine("h200").provenance.content_hash());
}

TEST_CASE("calibrate-model --ipu --write: files deriving from the calibrated one inherit the fit", "[machine][inheritance][fit][cli]") {
  TempDir dir("ipu_write");
  // Copies of the shipped files (mk2 derives from bow by name, so the copy directory stands in for the
  // shipped one) and a corner of the Bow measurements, so the fit takes seconds.
  for (const char* name : {"bow", "mk2", "mk1"})
    dir.write(std::string("machines/") + name + ".json", tilesim_test::slurp(ipu::load_ipu_machine(name).file));
  const std::string data = dir.path("data");
  for (const char* op : {"gather", "scatter_add"}) {
    std::istringstream in(tilesim_test::slurp(std::string(TILESIM_SOURCE_DIR) + "/validation/hydronet-gnn/bow/" + op + ".csv"));
    std::string text, line;
    for (int i = 0; i < 9 && std::getline(in, line); ++i) text += line + "\n";
    dir.write(std::string("data/") + op + ".csv", text);
  }
  const std::string env = "TILESIM_MACHINE_DIR='" + dir.path("machines") + "'";
  const auto calibrate = [&](const std::string& machine) {
    return tilesim_test::run_tilesim("calibrate-model --ipu " + machine + " --data " + data + " --write --json", dir.dir(), env);
  };
  const std::string mk2_text = tilesim_test::slurp(dir.path("machines/mk2.json"));
  const ipu::IpuMachine mk1_before = ipu::load_ipu_machine("mk1");
  const ipu::IpuMachine& shipped = shipped_bow();  // read now: TILESIM_MACHINE_DIR points at the copies below

  auto r = calibrate("bow");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(nlohmann::json::parse(r.out)["written"] == true);
  ::setenv("TILESIM_MACHINE_DIR", dir.path("machines").c_str(), 1);
  const ipu::IpuMachine bow = ipu::load_ipu_machine("bow");
  const ipu::IpuMachine mk2 = ipu::load_ipu_machine("mk2");
  const ipu::IpuMachine mk1 = ipu::load_ipu_machine("mk1");
  CHECK(tilesim_test::slurp(dir.path("machines/mk2.json")) == mk2_text);  // mk2 itself is not rewritten
  bool moved = false;
  for (const auto& p : ipu::default_ipu_fit_parameters()) {
    INFO(p.section << "." << p.key);
    const std::string path = p.section + "." + p.key;
    CHECK_THAT(bow.provenance.figure(path).source, Contains("calibrate-model --ipu bow") && Contains(data));
    moved = moved || ipu::get_figure(bow, p) != ipu::get_figure(shipped, p);
    // mk2 inherits the new fit from the copy of bow.json; mk1 states its own figures and keeps them.
    CHECK(ipu::get_figure(mk2, p) == ipu::get_figure(bow, p));
    CHECK(mk2.provenance.figure(path).file == bow.file);
    CHECK(ipu::get_figure(mk1, p) == ipu::get_figure(mk1_before, p));
  }
  CHECK(moved);  // the fit on a corner of the data moved at least one figure

  // Calibrating the derived file writes the figures into it, where they override its base.
  const std::string bow_text = tilesim_test::slurp(bow.file);
  r = calibrate("mk2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(tilesim_test::slurp(bow.file) == bow_text);
  const ipu::IpuMachine refitted = ipu::load_ipu_machine("mk2");
  ::unsetenv("TILESIM_MACHINE_DIR");
  for (const auto& p : ipu::default_ipu_fit_parameters()) {
    INFO(p.section << "." << p.key);
    CHECK(refitted.provenance.figure(p.section + "." + p.key).file == refitted.file);
    CHECK_THAT(refitted.provenance.figure(p.section + "." + p.key).source, Contains("calibrate-model --ipu mk2"));
  }
  CHECK(refitted.chip.clock_hz == 1.33e9);
}
