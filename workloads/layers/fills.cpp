// Values of the graph inputs a lowering describes (InputFill), drawn from streams keyed by tensor name.
#include <stdexcept>

#include "workloads/layers/layers.hpp"
#include "workloads/random_streams.hpp"

namespace tilesim::workloads::layers {

namespace {

std::vector<float> fill_values(const InputFill& fill, const TensorInfo& info, std::uint64_t seed) {
  using Kind = InputFill::Kind;
  auto engine = streams::named_engine(seed, info.name);
  switch (fill.kind) {
    case Kind::standard_normal: return streams::standard_normal(engine, info.elements());
    case Kind::uniform: return streams::uniform_reals(engine, info.elements(), -fill.bound, fill.bound);
    case Kind::block_diagonal: {
      // [H*C, H]: att[h, c] (drawn h-major, as PyG's [1, H, C] parameter) at row h*C + c, column h.
      const std::int64_t heads = info.shape.at(1), channels = fill.block_rows;
      const auto att = streams::uniform_reals(engine, heads * channels, -fill.bound, fill.bound);
      std::vector<float> m(static_cast<std::size_t>(info.elements()), 0.0f);
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t c = 0; c < channels; ++c)
          m[static_cast<std::size_t>((h * channels + c) * heads + h)] = att[static_cast<std::size_t>(h * channels + c)];
      return m;
    }
    case Kind::given_f32: return fill.f32;
    case Kind::given_i32: break;
  }
  throw std::logic_error("fill_values: not a float fill");
}

}  // namespace

void fill_inputs(TensorValues& values, const OpGraph& graph, std::vector<InputFill>& fills, std::uint64_t seed) {
  for (auto& fill : fills) {
    if (fill.kind == InputFill::Kind::given_i32) values.set_i32(fill.tensor, std::move(fill.i32));
    else values.set_f32(fill.tensor, fill_values(fill, graph.tensor(fill.tensor), seed), graph.tensor(fill.tensor).dtype);
  }
}

}  // namespace tilesim::workloads::layers
