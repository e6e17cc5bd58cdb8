# Precompiled headers. Most of a cold build was spent parsing the same third-party headers
# (the standard library, Eigen, abseil, protobuf, GoogleTest, LLVM) in every translation unit;
# each of the three headers in cmake/pch/ is now compiled once per build folder and reused by
# every target of its kind:
#   cmake/pch/common.h  libraries, tools, examples, benchmarks, fuzz targets
#   cmake/pch/test.h    gtest executables (common + GoogleTest/GoogleMock)
#   cmake/pch/llvm.h    targets that see LLVM's headers (common + LLVM IR)
# The headers are force-included, but every file still includes what it uses, so turning them
# off (-DTFJIT_PCH=OFF) builds the same program.
option(TFJIT_PCH "Precompile the common third-party headers" ON)

# A target whose only job is to build `header` into a PCH, with the include paths and
# definitions its consumers have (GCC rejects a PCH built under different macros).
function(_tfjit_pch_provider name header)
  add_library(${name} OBJECT ${CMAKE_SOURCE_DIR}/cmake/pch/empty.cc)
  target_precompile_headers(${name} PRIVATE ${CMAKE_SOURCE_DIR}/${header})
  target_link_libraries(${name} PRIVATE ${ARGN})
endfunction()

# Called once, at the end of the top-level CMakeLists.txt, when every target exists.
function(tfjit_apply_pch)
  if(NOT TFJIT_PCH)
    return()
  endif()
  _tfjit_pch_provider(tfjit_pch_common cmake/pch/common.h
                      Eigen3::Eigen absl::status absl::strings protobuf::libprotobuf)
  set(have_tests FALSE)
  if(TARGET GTest::gtest)
    set(have_tests TRUE)
    _tfjit_pch_provider(tfjit_pch_test cmake/pch/test.h
                        Eigen3::Eigen absl::status absl::strings protobuf::libprotobuf
                        GTest::gtest GTest::gmock)
    # Compiled as the code that uses it (TFJIT_TEST_CODE_OPTIONS, top-level CMakeLists.txt).
    target_compile_options(tfjit_pch_test PRIVATE ${TFJIT_TEST_CODE_OPTIONS})
  endif()
  set(have_llvm FALSE)
  if(COMMAND tfjit_add_llvm_includes)
    set(have_llvm TRUE)
    _tfjit_pch_provider(tfjit_pch_llvm cmake/pch/llvm.h
                        Eigen3::Eigen absl::status absl::strings protobuf::libprotobuf)
    tfjit_add_llvm_includes(tfjit_pch_llvm)
  endif()

  tfjit_all_targets(${CMAKE_SOURCE_DIR} targets)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$"
       OR t MATCHES "^tfjit_pch_")
      continue()
    endif()
    get_target_property(no_pch ${t} TFJIT_NO_PCH)
    if(no_pch)
      continue()
    endif()
    get_target_property(sources ${t} SOURCES)
    if(NOT sources MATCHES "\\.(cc|cpp)(;|$)")
      continue()
    endif()
    get_target_property(defs ${t} COMPILE_DEFINITIONS)
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(defs MATCHES "__STDC_CONSTANT_MACROS")
      # LLVM's definitions change what the standard headers declare, so these targets need a
      # PCH built with them.
      if(NOT have_llvm OR libs MATCHES "GTest::")
        continue()
      endif()
      set(provider tfjit_pch_llvm)
    elseif(have_tests AND libs MATCHES "GTest::")
      set(provider tfjit_pch_test)
    else()
      set(provider tfjit_pch_common)
    endif()
    target_precompile_headers(${t} REUSE_FROM ${provider})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # Lets ccache see which PCH a file used (it hashes the preprocessed output).
      target_compile_options(${t} PRIVATE -fpch-preprocess)
    endif()
    # Should GCC ever reject the PCH (-Winvalid-pch says so), it parses the header text
    # instead, which needs Eigen's include path.
    target_include_directories(${t} SYSTEM PRIVATE
                               $<TARGET_PROPERTY:Eigen3::Eigen,INTERFACE_INCLUDE_DIRECTORIES>)
  endforeach()
endfunction()
