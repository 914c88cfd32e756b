# The NEUROC_GPU_CHECK build (see scripts/gpu-check): the SNN core (snn/,
# kernels/, kernels/cuda/) as a static library, without the parts that need
# HDF5 (data_h5.c), OpenBLAS (ann_ops_linear.c) or protobuf-c (convert/);
# tests/test_cuda.c as a plain C test (no cmocka, no ONNX: random networks
# and the example CNN's shapes); bench/cuda_bench.c. Only the CUDA toolkit
# (nvcc, cudart, cuBLAS, cuSPARSE) is needed. Objects that use the missing
# parts are left out of the links by the static library.
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(FATAL_ERROR "NEUROC_GPU_CHECK needs nvcc (the CUDA toolkit)")
endif()
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 75-virtual 90-real)
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
add_compile_options($<$<COMPILE_LANGUAGE:C>:-Wall> $<$<COMPILE_LANGUAGE:C>:-Wextra>
                    $<$<COMPILE_LANGUAGE:C>:-ffp-contract=off> $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)
file(GLOB NEUROC_CORE_SOURCES CONFIGURE_DEPENDS snn/*.c kernels/*.c kernels/cuda/*.cu)
list(FILTER NEUROC_CORE_SOURCES EXCLUDE REGEX "(ann_ops_linear|data_h5|dist_mpi)\\.c$")
add_library(neuroc_core STATIC ${NEUROC_CORE_SOURCES})
target_include_directories(neuroc_core PUBLIC ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR})
target_compile_definitions(neuroc_core PRIVATE NEUROC_VERSION="${PROJECT_VERSION}" NEUROC_HAVE_CUDA=1)
find_library(MATH_LIB m)
target_link_libraries(neuroc_core PUBLIC CUDA::cudart CUDA::cublas CUDA::cusparse ${MATH_LIB})
foreach(prog tests/test_cuda bench/cuda_bench)
  get_filename_component(name ${prog} NAME)
  add_executable(${name} ${prog}.c)
  target_link_libraries(${name} PRIVATE neuroc_core)
  target_compile_definitions(${name} PRIVATE NC_TESTS_NO_ONNX NC_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
endforeach()
enable_testing()
add_test(NAME test_cuda COMMAND test_cuda)
set_tests_properties(test_cuda PROPERTIES SKIP_RETURN_CODE 77)
