# The include rule of docs/architecture.md, checked on every source file: each layer (a top-level folder,
# or a model family under models/) may include only the layers listed for it below. A model never
# includes kernels, analysis, backends or another model; the engine (sim/) knows nothing but common/.
# Run by CTest as: cmake -DSOURCE_DIR=... -P check_layers.cmake; fails listing every include that breaks it.

cmake_minimum_required(VERSION 3.25)  # IN_LIST and the other policies of the project

# layer -> the layers it may include (itself always allowed)
set(allowed_common "")
# The MPI world (rank, size): below everything that runs over ranks.
set(allowed_mpi "")
set(allowed_ir "common")
set(allowed_fitting "ir;common")
set(allowed_sim "mpi;common")
set(allowed_results "ir;common")
set(allowed_workloads "ir;common")
set(allowed_models/ipu "sim;fitting;results;ir;common")
set(allowed_models/gpu "fitting;results;ir;common")
set(allowed_models/cpu "results;ir;common")
# Closed forms of multi-device systems: pure functions over the "parallel" section's terms.
set(allowed_models/system "ir;common")
set(allowed_kernels "results;ir;common")
set(allowed_backends "models/ipu;models/gpu;models/cpu;models/system;kernels;sim;workloads;fitting;results;ir;common")
set(allowed_analysis "backends;workloads;fitting;results;ir;common")
# The run pipeline: a request in, a result out; the engine only for what it spread over MPI ranks.
set(allowed_runs "analysis;backends;workloads;fitting;results;sim;mpi;ir;common")
set(checked_layers common mpi ir fitting sim results workloads models/ipu models/gpu models/cpu models/system kernels backends
    analysis runs)
set(unchecked_folders apps python tests bench)  # may include every layer; no layer may include them

# The layer of a repository-relative path ("models/ipu/plan.cpp" -> "models/ipu", "apps/x.hpp" -> "apps"),
# or "" for a path outside the project's folders (a quoted system header).
function(layer_of path out)
  string(REGEX MATCH "^models/[^/]+" model "${path}")
  if(model)
    set(${out} "${model}" PARENT_SCOPE)
    return()
  endif()
  string(REGEX MATCH "^[^/]+" top "${path}")
  if(top IN_LIST checked_layers OR top IN_LIST unchecked_folders)
    set(${out} "${top}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

set(broken "")
set(files_checked 0)
foreach(layer IN LISTS checked_layers)
  file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${layer}/*.hpp" "${SOURCE_DIR}/${layer}/*.cpp"
       "${SOURCE_DIR}/${layer}/*.cu")
  foreach(source IN LISTS sources)
    math(EXPR files_checked "${files_checked} + 1")
    file(STRINGS "${SOURCE_DIR}/${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" target "${line}")
      layer_of("${target}" target_layer)
      if(target_layer STREQUAL "" OR target_layer STREQUAL layer)
        continue()
      endif()
      if(NOT target_layer IN_LIST allowed_${layer})
        string(APPEND broken "\n  ${source}: #include \"${target}\" (${layer} may include: ${allowed_${layer}})")
      endif()
    endforeach()
  endforeach()
endforeach()

# Inside models/ipu (models/ipu/README.md): machine/ includes no other room, planning/ only machine/;
# programs/ may include both (a program realises a plan, a plan never needs a program).
foreach(room machine planning)
  file(GLOB_RECURSE room_sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/models/ipu/${room}/*")
  foreach(source IN LISTS room_sources)
    file(STRINGS "${SOURCE_DIR}/${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"models/ipu/")
    foreach(line IN LISTS includes)
      if(line MATCHES "models/ipu/programs/" OR (room STREQUAL "machine" AND line MATCHES "models/ipu/planning/"))
        string(APPEND broken "\n  ${source}: ${line} (models/ipu/${room}/ may not include that room)")
      endif()
    endforeach()
  endforeach()
endforeach()

if(files_checked EQUAL 0)
  message(FATAL_ERROR "no source files found under ${SOURCE_DIR}")
endif()
if(NOT broken STREQUAL "")
  message(FATAL_ERROR "includes that break the layer rule (docs/architecture.md):${broken}")
endif()
message(STATUS "layer rule holds in ${files_checked} files")
