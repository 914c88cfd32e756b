# The NEUROC_GPU_CHECK build (see scripts/gpu-check): the SNN core
# (cmake/core_rooms.cmake: the rooms of snn/ and kernels/, which need none
# of HDF5, OpenBLAS or protobuf-c) as a static library, tests/test_cuda.c as
# a plain C test (no cmocka, no ONNX: random networks and the example CNN's
# shapes) and bench/cuda_bench.c. Only the CUDA toolkit (nvcc, cudart,
# cuBLAS, cuSPARSE) is needed. As in the full build, the cuda backend is the
# module libneuroc_cuda.so, with its probe libneuroc_cuda_probe.so
# (core_rooms.cmake), built next to the programs, where the core's loader
# finds them: the test runs the modules users get.
if(NOT NEUROC_HAVE_CUDA)
  message(FATAL_ERROR "NEUROC_GPU_CHECK needs nvcc (the CUDA toolkit)")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/core_rooms.cmake)
add_library(neuroc_core STATIC ${NC_CORE_OBJECTS})
target_include_directories(neuroc_core PUBLIC ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR})
target_link_libraries(neuroc_core PUBLIC ${NC_CORE_LINK_LIBS})
foreach(prog tests/test_cuda bench/cuda_bench)
  get_filename_component(name ${prog} NAME)
  add_executable(${name} ${prog}.c)
  target_link_libraries(${name} PRIVATE neuroc_core)
  target_compile_definitions(${name} PRIVATE NC_TESTS_NO_ONNX NC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  add_dependencies(${name} ${NC_CUDA_MODULES})
endforeach()
enable_testing()
add_test(NAME test_cuda COMMAND test_cuda)
set_tests_properties(test_cuda PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
