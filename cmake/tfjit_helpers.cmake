# Helpers shared by the CMakeLists of every layer.

# add_subdirectory only when the folder has a CMakeLists.txt (layers grow issue by issue).
function(tfjit_add_subdirs)
  foreach(dir ${ARGN})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt)
      add_subdirectory(${dir})
    endif()
  endforeach()
endfunction()

# tfjit_use_shared_llvm(TARGET...): link these executables against libLLVM.so instead of LLVM's
# static archives (backends/llvm/CMakeLists.txt says why tests do).
function(tfjit_use_shared_llvm)
  set_target_properties(${ARGN} PROPERTIES TFJIT_SHARED_LLVM ON)
endfunction()

# tfjit_add_gtest(NAME SOURCES a.cc b.cc LIBS x y): a gtest executable that ctest runs as 3
# gtest shards (NAME_shard0..2): every process start loads LLVM and the whole runtime, and
# one process per gtest case (about 4700 of them) cost minutes of a CI run in process starts
# alone. -DTFJIT_CTEST_PER_CASE=ON (normal builds) makes every gtest case its own ctest test
# instead, discovered before the test run. Either way, GTEST_FILTER selects cases.
function(tfjit_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  tfjit_use_shared_llvm(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE TFJIT_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  # Label = the folder under tests/ (unit, tf, ...): `ctest -L unit` selects a family, and the
  # sanitizer runs pick theirs by label.
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/tests ${CMAKE_CURRENT_SOURCE_DIR})
  string(REGEX REPLACE "/.*" "" label "${rel}")
  if(TFJIT_SANITIZE OR NOT TFJIT_CTEST_PER_CASE)
    # Sanitizer builds always shard: a process start costs about a second there.
    set(shards 3)
    math(EXPR last "${shards} - 1")
    foreach(i RANGE ${last})
      add_test(NAME ${name}_shard${i} COMMAND ${name})
      set_tests_properties(${name}_shard${i} PROPERTIES LABELS "${label}"
        ENVIRONMENT "TFJIT_SOURCE_DIR=${CMAKE_SOURCE_DIR};GTEST_TOTAL_SHARDS=${shards};GTEST_SHARD_INDEX=${i}")
    endforeach()
    return()
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
                       PROPERTIES ENVIRONMENT "TFJIT_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
                                  LABELS "${label}")
endfunction()

# tfjit_ubsan_parsers(TARGETS t... EXCEPT_SOURCES f...): code that parses untrusted bytes
# (model files, checkpoints, .npy). The ASan+UBSan and fuzz builds leave UBSan's per-access
# null and alignment checks out of everything else (top-level CMakeLists.txt): they made each
# file compile about 30% slower (math_kernels.cc 2.4 times; docs/decisions.md, "Cold CI
# time"), and ASan still reports a null or wild access. A parser is where a misaligned read
# of a field out of a file buffer would hide, so they stay on there. EXCEPT_SOURCES (protoc's
# generated code) stays without them.
function(tfjit_ubsan_parsers)
  cmake_parse_arguments(ARG "" "" "TARGETS;EXCEPT_SOURCES" ${ARGN})
  if(NOT TFJIT_SANITIZE STREQUAL "address" AND NOT TFJIT_FUZZ)
    return()
  endif()
  foreach(t ${ARG_TARGETS})
    target_compile_options(${t} PRIVATE -fsanitize=null,alignment)
  endforeach()
  if(ARG_EXCEPT_SOURCES)
    set_property(SOURCE ${ARG_EXCEPT_SOURCES} APPEND PROPERTY COMPILE_OPTIONS
                 -fno-sanitize=null,alignment)
  endif()
endfunction()

# Every target defined in `dir` and the folders below it.
function(tfjit_all_targets dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    tfjit_all_targets(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# ${TFJIT_TEST_CODE_OPTIONS} on every target that links GoogleTest (top-level CMakeLists.txt).
# Called once, when every target exists.
function(tfjit_apply_test_code_options)
  tfjit_all_targets(${CMAKE_SOURCE_DIR} targets)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(libs MATCHES "GTest::")
      target_compile_options(${t} PRIVATE ${TFJIT_TEST_CODE_OPTIONS})
    endif()
  endforeach()
endfunction()
