# Helpers shared by the CMakeLists of every layer.

# add_subdirectory only when the folder has a CMakeLists.txt (layers grow issue by issue).
function(tfjit_add_subdirs)
  foreach(dir ${ARGN})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt)
      add_subdirectory(${dir})
    endif()
  endforeach()
endfunction()

# tfjit_add_gtest(NAME SOURCES a.cc b.cc LIBS x y): a gtest executable that ctest runs as 3
# gtest shards (NAME_shard0..2): every process start loads the statically linked LLVM, and
# one process per gtest case (about 4700 of them) cost minutes of a CI run in process starts
# alone. -DTFJIT_CTEST_PER_CASE=ON (normal builds) makes every gtest case its own ctest test
# instead, discovered before the test run. Either way, GTEST_FILTER selects cases.
function(tfjit_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
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

# tfjit_eigen_heavy(TARGETS t... SOURCES f...): code made of Eigen template instantiations.
# In the ASan+UBSan and fuzz builds, UBSan's per-access null and alignment checks are left out there:
# they made such files compile 2.4 times slower (math_kernels.cc: 85 s, 35 s without them;
# docs/decisions.md), and ASan still reports a null or wild access when it happens. Every
# other UBSan check (overflow, shifts, bounds, casts, ...) stays.
function(tfjit_eigen_heavy)
  cmake_parse_arguments(ARG "" "" "TARGETS;SOURCES" ${ARGN})
  if(NOT TFJIT_SANITIZE STREQUAL "address" AND NOT TFJIT_FUZZ)
    return()
  endif()
  foreach(t ${ARG_TARGETS})
    target_compile_options(${t} PRIVATE -fno-sanitize=null,alignment)
  endforeach()
  if(ARG_SOURCES)
    set_property(SOURCE ${ARG_SOURCES} APPEND PROPERTY COMPILE_OPTIONS -fno-sanitize=null,alignment)
  endif()
endfunction()
