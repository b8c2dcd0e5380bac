#pragma once
// Finding a tensor of an op graph by name, for the tests of lowered layers and models
// (tests/workloads/layers_test.cpp, model_spec_test.cpp).
#include <cstddef>
#include <string>

#include <catch2/catch.hpp>

#include "ir/op_graph.hpp"

namespace tilesim_test {

inline tilesim::TensorId tensor_named(const tilesim::OpGraph& g, const std::string& name) {
  for (std::size_t t = 0; t < g.tensors.size(); ++t)
    if (g.tensors[t].name == name) return static_cast<tilesim::TensorId>(t);
  FAIL("no tensor " << name);
  return -1;
}

}  // namespace tilesim_test
