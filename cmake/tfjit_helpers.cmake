# Helpers shared by the CMakeLists of every layer.

# add_subdirectory only when the folder has a CMakeLists.txt (layers grow issue by issue).
function(tfjit_add_subdirs)
  foreach(dir ${ARGN})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt)
      add_subdirectory(${dir})
    endif()
  endforeach()
endfunction()

# tfjit_add_gtest(NAME SOURCES a.cc b.cc LIBS x y): a gtest executable whose tests ctest runs
# one by one (discovered before the test run, so building does not execute tests).
function(tfjit_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE TFJIT_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
                       PROPERTIES ENVIRONMENT "TFJIT_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endfunction()
