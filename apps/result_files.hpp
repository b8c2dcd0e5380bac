#pragma once
// What a command writes from a library result (runs/), in one place for the command and the Python
// module: a call from Python writes the very files the command writes, then reads the result object
// rather than the files back.
#include "runs/model_calibration.hpp"
#include "runs/validation_run.hpp"

namespace tilesim::cli {

// `tilesim validate`'s files: the hydronet figures rendered into the result's plot folder (their files
// added to report["files"]["plots"]), points.csv and validation.md / .tex, then validation.json from
// the report as it then stands. The hydronet suite's timing line goes to standard error once its
// files are written, since it counts them.
void write_validation_files(runs::ValidationResult& result);

// `tilesim calibrate-model --write`: the fitted machine files, in order (none without --write).
void write_machine_files(const runs::ModelCalibration& calibration);

}  // namespace tilesim::cli
