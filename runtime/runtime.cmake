# The runtime library proper (included from runtime/CMakeLists.txt once it exists).
add_library(tfjit_runtime STATIC ${CMAKE_CURRENT_LIST_DIR}/compilation_cache.cc
            ${CMAKE_CURRENT_LIST_DIR}/device.cc ${CMAKE_CURRENT_LIST_DIR}/executor.cc
            ${CMAKE_CURRENT_LIST_DIR}/cluster_kernel.cc ${CMAKE_CURRENT_LIST_DIR}/frame_executor.cc
            ${CMAKE_CURRENT_LIST_DIR}/function_runtime.cc ${CMAKE_CURRENT_LIST_DIR}/placement.cc
            ${CMAKE_CURRENT_LIST_DIR}/control_flow.cc ${CMAKE_CURRENT_LIST_DIR}/op_support.cc
            ${CMAKE_CURRENT_LIST_DIR}/session.cc ${CMAKE_CURRENT_LIST_DIR}/shape_policy.cc
            ${CMAKE_CURRENT_LIST_DIR}/tf_flags.cc)
target_link_libraries(tfjit_runtime PUBLIC tfjit_kernels tfjit_cluster tfjit_cpu tfjit_gpu tfjit_interpreter tfjit_frontend
                      tfjit_core)
