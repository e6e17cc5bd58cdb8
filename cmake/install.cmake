# The installable library and package: libtfjit.so (the public API of include/tfjit, with the
# layers, LLVM and Eigen linked in privately), the headers, the tfjit CLI, a CMake package
# (find_package(tfjit CONFIG) -> tfjit::tfjit) and a pkg-config file. `cmake --install BUILD
# --prefix DIR` puts them under DIR; tests/install/install_test.sh builds examples/embed against
# the result, outside the source tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(tfjit_shared SHARED ${CMAKE_SOURCE_DIR}/cmake/install/empty.cc)
set_target_properties(tfjit_shared PROPERTIES
  OUTPUT_NAME tfjit
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}
  LINK_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/install/exports.map
  EXPORT_NAME tfjit)
# Every object of the runtime and core archives (the public API's definitions live there; the
# library's own source references none of them), the rest pulled in as they are needed.
# (CMake's WHOLE_ARCHIVE feature refuses an archive that also appears plainly in the link
# interface, as tfjit_core does through tfjit_runtime.)
target_link_options(tfjit_shared PRIVATE
  "LINKER:--whole-archive" $<TARGET_FILE:tfjit_runtime> $<TARGET_FILE:tfjit_core>
  "LINKER:--no-whole-archive"
  -Wl,--version-script=${CMAKE_SOURCE_DIR}/cmake/install/exports.map -Wl,--gc-sections)
target_link_libraries(tfjit_shared
  PRIVATE tfjit_runtime
  PUBLIC absl::status absl::statusor)
target_include_directories(tfjit_shared PUBLIC
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
add_library(tfjit::tfjit ALIAS tfjit_shared)

install(TARGETS tfjit_shared EXPORT tfjitTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/tfjit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET tfjit)
  install(TARGETS tfjit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT tfjitTargets NAMESPACE tfjit::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tfjit)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/install/tfjitConfig.cmake.in
  ${CMAKE_BINARY_DIR}/tfjitConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tfjit)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tfjitConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tfjitConfig.cmake ${CMAKE_BINARY_DIR}/tfjitConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tfjit)
# pkg-config: the prefix is the one given at install time (cmake --install --prefix sets
# CMAKE_INSTALL_PREFIX for install(CODE)), so the file is written then.
install(CODE "
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(CMAKE_INSTALL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(CMAKE_INSTALL_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  configure_file(\"${CMAKE_SOURCE_DIR}/cmake/install/tfjit.pc.in\"
                 \"${CMAKE_BINARY_DIR}/tfjit.pc\" @ONLY)
  file(INSTALL \"${CMAKE_BINARY_DIR}/tfjit.pc\"
       DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\")
")

# The API reference (docs/Doxyfile.in, Doxygen from Debian): `cmake --build BUILD --target
# api_docs` writes BUILD/api-docs/html; tests/install checks it builds without warnings.
find_program(TFJIT_DOXYGEN doxygen)
if(TFJIT_DOXYGEN)
  configure_file(${CMAKE_SOURCE_DIR}/docs/Doxyfile.in ${CMAKE_BINARY_DIR}/Doxyfile @ONLY)
  add_custom_target(api_docs
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/api-docs
    COMMAND ${TFJIT_DOXYGEN} ${CMAKE_BINARY_DIR}/Doxyfile
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    COMMENT "Doxygen: the API reference of include/tfjit"
    VERBATIM)
endif()
