# TFJIT_STATIC_BUNDLE: binaries that run on a machine with nothing but glibc (>= Debian 12's
# 2.36) and, for the GPU, NVIDIA's driver: scripts/gpu_check.sh builds tfjit-gpu-check this
# way for a GPU machine that has no LLVM and no package registry. LLVM is static already;
# here abseil, protobuf, leveldb, snappy, zlib and zstd come from their .a archives, libstdc++
# and libgcc are linked statically, unused sections are dropped and the result is stripped.

# Before the find_package calls.
macro(tfjit_static_bundle_prefer_archives)
  set(Protobuf_USE_STATIC_LIBS ON)
  add_compile_options(-ffunction-sections -fdata-sections)
  add_link_options(-static-libstdc++ -static-libgcc -Wl,--gc-sections -s)
endmacro()

# After them (LLVM's CMake package insists on finding a shared zstd): imported targets that
# name a shared library (abseil's, zstd's) point at the archive beside it instead, and
# libraries found by name later (leveldb, snappy) are the archives.
macro(tfjit_static_bundle_use_archives)
  set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
  tfjit_static_bundle_remap_imported()
endmacro()

function(tfjit_static_bundle_remap_imported)
  get_property(targets DIRECTORY ${CMAKE_SOURCE_DIR} PROPERTY IMPORTED_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(NOT type STREQUAL "SHARED_LIBRARY" AND NOT type STREQUAL "UNKNOWN_LIBRARY")
      continue()
    endif()
    foreach(prop IMPORTED_LOCATION IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_NONE
                 IMPORTED_LOCATION_RELWITHDEBINFO)
      get_target_property(location ${t} ${prop})
      if(location AND location MATCHES "^(.*)\\.so(\\.[0-9.]+)?$")
        if(EXISTS "${CMAKE_MATCH_1}.a")
          set_target_properties(${t} PROPERTIES ${prop} "${CMAKE_MATCH_1}.a")
          set_target_properties(${t} PROPERTIES IMPORTED_SONAME "" IMPORTED_NO_SONAME TRUE)
          if(type STREQUAL "SHARED_LIBRARY")
            message(STATUS "static bundle: ${t} -> ${CMAKE_MATCH_1}.a")
          endif()
        endif()
      endif()
    endforeach()
  endforeach()
endfunction()
