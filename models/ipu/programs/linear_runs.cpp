#include "models/ipu/programs/linear_runs.hpp"

#include "models/ipu/machine/element_bytes.hpp"
#include "models/ipu/programs/linear_buffers.hpp"

namespace tilesim::ipu {

LinearProgram linear_program(const Op& op, const std::string& input_name, const LinearLayout& input,
                             const LinearLayout& output, std::int64_t value_bytes) {
  LinearProgram p;
  p.op.program.name = op.name;
  p.input = add_linear_buffers(p.op.program, input_name + " (linear)", input, value_bytes, &p.op.input);
  p.output = add_linear_buffers(p.op.program, "output (linear)", output, value_bytes, &p.op.output);
  p.op.input_width = 1;
  p.op.output_width = 1;
  return p;
}

}  // namespace tilesim::ipu
