// What-if machines (common/machine_overrides.hpp): the name's grammar and its errors, and the three
// model families' machines loaded with figures set and scaled: the figure changes, it says it is a
// what-if, the machine has its own name and content hash, and a path that names no figure, or a value
// the model's reader refuses, is bad input naming the file and the path.
#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/machine_overrides.hpp"
#include "models/cpu/node/cpu_node.hpp"
#include "models/gpu/gpu_machine.hpp"
#include "models/ipu/machine/machine_file.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::string override_error(const std::string& name) {
  try {
    (void)split_machine_overrides(name, "IPU");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

template <typename Load>
std::string load_error(Load load) {
  try {
    load();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("what-if machine names: the base, each figure set or scaled, and malformed names refused", "[machines][unit]") {
  CHECK_FALSE(split_machine_overrides("bow", "IPU").has_value());
  const auto o = split_machine_overrides("bow{chip.sram_bytes_per_tile=1277952;chip.tile_clock_hz*=0.5}", "IPU");
  REQUIRE(o);
  CHECK(o->base == "bow");
  REQUIRE(o->figures.size() == 2);
  CHECK(o->figures[0].path == "chip.sram_bytes_per_tile");
  CHECK_FALSE(o->figures[0].scale);
  CHECK(o->figures[0].value == 1277952.0);
  CHECK(o->figures[1].path == "chip.tile_clock_hz");
  CHECK(o->figures[1].scale);
  CHECK(o->figures[1].value == 0.5);
  const auto path = split_machine_overrides("machines/my.json{chip.num_tiles=736}", "IPU");
  REQUIRE(path);
  CHECK(path->base == "machines/my.json");

  CHECK_THAT(override_error("bow{chip.num_tiles=736"), Contains("braces not as NAME{...}"));
  CHECK_THAT(override_error("bow{chip.num_tiles=736}x"), Contains("braces not as NAME{...}"));
  CHECK_THAT(override_error("{chip.num_tiles=736}"), Contains("no machine before '{'"));
  CHECK_THAT(override_error("bow{chip.num_tiles}"), Contains("has no '='"));
  CHECK_THAT(override_error("bow{chip.num_tiles=many}"), Contains("\"many\" is not a finite number"));
  CHECK_THAT(override_error("bow{chip.num_tiles=inf}"), Contains("is not a finite number"));
  CHECK_THAT(override_error("bow{chip..num_tiles=1}"), Contains("is not a JSON path"));
  CHECK_THAT(override_error("bow{chip.num_tiles=1;chip.num_tiles=2}"), Contains("chip.num_tiles twice"));
  CHECK_THAT(override_error("bow{}"), Contains("no figure between the braces"));
}

TEST_CASE("a what-if IPU is its base with the figures set or scaled, marked as the what-if's", "[machines][unit]") {
  const ipu::IpuMachine bow = ipu::load_ipu_machine("bow");
  const ipu::IpuMachine fast = ipu::load_ipu_machine("bow{chip.tile_clock_hz*=2;chip.sram_bytes_per_tile=1277952}");
  CHECK(fast.chip.clock_hz == Approx(2 * bow.chip.clock_hz));
  CHECK(fast.chip.sram_bytes_per_tile == 1277952);
  CHECK(fast.chip.num_tiles == bow.chip.num_tiles);
  CHECK(fast.chip.name == "bow{chip.tile_clock_hz*=2;chip.sram_bytes_per_tile=1277952}");
  const nlohmann::json base_provenance = bow.provenance.to_json(), provenance = fast.provenance.to_json();
  CHECK(provenance["content_hash"] != base_provenance["content_hash"]);
  // The same what-if read twice is the same machine.
  CHECK(ipu::load_ipu_machine("bow{chip.tile_clock_hz*=2;chip.sram_bytes_per_tile=1277952}").provenance.to_json()["content_hash"] ==
        provenance["content_hash"]);
  const std::string figures = provenance["figures"].dump();
  CHECK_THAT(figures, Contains("what-if: chip.tile_clock_hz*=2"));
  CHECK_THAT(figures, Contains("not a published figure"));

  // A system's chip figures reach its chip file; its own figures stay its own.
  const ipu::IpuMachine pod = ipu::load_ipu_machine("pod16");
  const ipu::IpuMachine what_if_pod = ipu::load_ipu_machine("pod16{chip.tile_clock_hz*=2}");
  CHECK(what_if_pod.chip.clock_hz == Approx(2 * pod.chip.clock_hz));
  CHECK(what_if_pod.system.num_ipus == pod.system.num_ipus);
  CHECK(what_if_pod.chip.num_tiles == pod.chip.num_tiles);

  CHECK_THAT(load_error([] { ipu::load_ipu_machine("bow{chip.sram_per_tile=1}"); }),
             Contains("bow.json: chip.sram_per_tile: expected a figure of the IPU machine"));
  CHECK_THAT(load_error([] { ipu::load_ipu_machine("bow{chip=1}"); }), Contains("bow.json: chip: expected a figure"));
  CHECK_THAT(load_error([] { ipu::load_ipu_machine("bow{chip.num_tiles=1000.5}"); }), Contains("chip.num_tiles"));
  CHECK_THAT(load_error([] { ipu::load_ipu_machine("bowx{chip.num_tiles=736}"); }), Contains("unknown IPU machine \"bowx\""));
  // Constraints between figures hold for what-if machines too: tiles come in whole exchange groups.
  CHECK_THAT(load_error([] { ipu::load_ipu_machine("bow{chip.num_tiles=1471}"); }),
             Contains("chip.num_tiles.value: expected a multiple of chip.tiles_per_supertile (2 tiles share an exchange bus), found 1471"));
  CHECK(ipu::load_ipu_machine("bow{chip.num_tiles=736}").chip.num_tiles == 736);
}

TEST_CASE("what-if GPU and CPU-node machines: a figure scaled, the rest the base's", "[machines][unit]") {
  const gpu::GpuMachine a100 = gpu::load_gpu_machine("a100-40gb");
  const gpu::GpuMachine wide = gpu::load_gpu_machine("a100-40gb{chip.hbm_bytes_per_s*=2}");
  CHECK(wide.hbm_bytes_per_s == Approx(2 * a100.hbm_bytes_per_s));
  CHECK(wide.sm_count == a100.sm_count);
  CHECK(wide.provenance.to_json()["content_hash"] != a100.provenance.to_json()["content_hash"]);
  CHECK_THAT(load_error([] { gpu::load_gpu_machine("a100-40gb{chip.hbm=1}"); }), Contains("chip.hbm: expected a figure of the GPU machine"));

  const cpu_model::CpuNode node = cpu_model::load_cpu_node("spr-2s");
  const cpu_model::CpuNode more = cpu_model::load_cpu_node("spr-2s{node.cores_per_socket=112}");
  CHECK(more.provenance.to_json()["content_hash"] != node.provenance.to_json()["content_hash"]);
  CHECK_THAT(more.provenance.to_json()["figures"].dump(), Contains("what-if: node.cores_per_socket=112"));
}
