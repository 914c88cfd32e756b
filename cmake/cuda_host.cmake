# The CPU harness of the cuda backend (tests/cuda_host/README.md): the real
# snn/backends/cuda sources, the kernels compiled as host C++ (each launch
# rewritten by tests/cuda_host/launch_rewrite.cmake), linked against a small
# CUDA runtime, cuBLAS and cuSPARSE that run on the CPU and check what the
# GPU would not (barriers, warp collectives, bounds, stream order, CSR).
# The modules have the names the core loads (libneuroc_cuda.so,
# libneuroc_cuda_probe.so) in build/cuda_host, which test_cuda_host puts
# first on NEUROC_BACKEND_PATH. Needs the CUDA toolkit's headers only.
enable_language(CXX)
set(NC_HOST_DIR ${CMAKE_SOURCE_DIR}/tests/cuda_host)
set(NC_HOST_OUT ${CMAKE_BINARY_DIR}/cuda_host)
set(NC_CUDA_DIR ${CMAKE_SOURCE_DIR}/snn/backends/cuda)
set(nc_host_warnings -Wall -Wextra)
if(NEUROC_WERROR)
  list(APPEND nc_host_warnings -Werror)
endif()

foreach(cu cuda_kernels cuda_device)
  add_custom_command(OUTPUT ${NC_HOST_OUT}/gen/${cu}.cc
    COMMAND ${CMAKE_COMMAND} -DIN=${NC_CUDA_DIR}/${cu}.cu -DOUT=${NC_HOST_OUT}/gen/${cu}.cc
            -P ${NC_HOST_DIR}/launch_rewrite.cmake
    DEPENDS ${NC_CUDA_DIR}/${cu}.cu ${NC_HOST_DIR}/launch_rewrite.cmake
    COMMENT "CPU harness: ${cu}.cu as host C++")
endforeach()

# the runtime: one shared library for both modules, as libcudart is
add_library(nc_cuda_host_rt SHARED ${NC_HOST_DIR}/blocks.cc ${NC_HOST_DIR}/memory.cc ${NC_HOST_DIR}/streams.cc
            ${NC_HOST_DIR}/blas.cc ${NC_HOST_DIR}/fiber.cc)
target_include_directories(nc_cuda_host_rt PUBLIC ${NC_HOST_DIR})
target_include_directories(nc_cuda_host_rt SYSTEM PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
target_link_libraries(nc_cuda_host_rt PRIVATE PkgConfig::OPENBLAS)
target_compile_options(nc_cuda_host_rt PRIVATE ${nc_host_warnings} -ffp-contract=off)
set_target_properties(nc_cuda_host_rt PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${NC_HOST_OUT} CXX_STANDARD 17
                      CXX_STANDARD_REQUIRED ON)

add_library(neuroc_cuda_host MODULE ${NC_CUDA_DIR}/backend_cuda.c ${NC_HOST_OUT}/gen/cuda_kernels.cc
            ${NC_HOST_OUT}/gen/cuda_device.cc ${NC_CUDA_DIR}/cuda_module.c
            ${CMAKE_SOURCE_DIR}/snn/backends/weight_layout.c)
add_library(neuroc_cuda_host_probe MODULE ${NC_HOST_OUT}/gen/cuda_device.cc ${NC_CUDA_DIR}/cuda_module.c)
target_compile_definitions(neuroc_cuda_host_probe PRIVATE NC_CUDA_PROBE_ONLY=1)
set_target_properties(neuroc_cuda_host PROPERTIES OUTPUT_NAME neuroc_cuda)
set_target_properties(neuroc_cuda_host_probe PROPERTIES OUTPUT_NAME neuroc_cuda_probe)
# nvcc does not warn of int/unsigned comparisons with threadIdx; g++ would
set_source_files_properties(${NC_HOST_OUT}/gen/cuda_kernels.cc ${NC_HOST_OUT}/gen/cuda_device.cc PROPERTIES
                            COMPILE_OPTIONS -Wno-sign-compare)
foreach(m neuroc_cuda_host neuroc_cuda_host_probe)
  target_include_directories(${m} PRIVATE ${CMAKE_BINARY_DIR}/rooms/cuda ${CMAKE_SOURCE_DIR}/include ${NC_CUDA_DIR})
  target_compile_definitions(${m} PRIVATE NEUROC_HAVE_CUDA=1 NEUROC_VERSION="${PROJECT_VERSION}")
  target_compile_options(${m} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${nc_host_warnings}>
                         $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>)
  target_link_libraries(${m} PRIVATE nc_cuda_host_rt)
  target_link_options(${m} PRIVATE "LINKER:--version-script=${NC_CUDA_DIR}/module.map")
  set_target_properties(${m} PROPERTIES PREFIX lib SUFFIX .so LIBRARY_OUTPUT_DIRECTORY ${NC_HOST_OUT}
                        CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
endforeach()

# the GPU benchmark program, built here too so that it keeps compiling; on
# the harness it runs small shapes (cuda_bench resnet18 32 2 0)
add_executable(cuda_bench ${CMAKE_SOURCE_DIR}/bench/cuda_bench.c)
target_include_directories(cuda_bench PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(cuda_bench PRIVATE NC_TESTS_NO_ONNX NC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
target_link_libraries(cuda_bench PRIVATE neuroc_static)
add_dependencies(cuda_bench neuroc_cuda_host neuroc_cuda_host_probe)
