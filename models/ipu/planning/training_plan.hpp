#pragma once
// Plans of the op kinds a training step adds beyond the elementwise unary_grad (dense_plan.cpp) and the
// transposed matmuls (MatmulTranspose). Each is built from the layout its operands arrive in (the linear
// layout, or where PopTorch keeps a tensor) and costed phase by phase as its program runs
// (programs/op_program.hpp):
//   optimizer_step: elementwise over the parameter's P elements in its linear layout, the optimizer
//                   state kept beside the parameter (PopTorch keeps each state tensor mapped like its
//                   parameter), Adam's step number broadcast from tile 0 first.
#include <cstdint>

#include "ir/op_graph.hpp"
#include "models/ipu/machine/machine_file.hpp"
#include "models/ipu/planning/plan.hpp"

namespace tilesim::ipu {

OpPlan plan_optimizer_step(const Op& op, const IpuMachine& machine);

}  // namespace tilesim::ipu
