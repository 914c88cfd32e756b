# The SNN core: the rooms under snn/ and kernels/ (cmake/rooms.cmake), which
# need no HDF5, protobuf-c or OpenBLAS. Used by the full build and by the
# NEUROC_GPU_CHECK build (cmake/gpu_check.cmake) alike.
include(${CMAKE_CURRENT_LIST_DIR}/rooms.cmake)
if(NEUROC_HAVE_OPENMP)
  set(NC_OMP OpenMP::OpenMP_C)
endif()
nc_room(kernels DIR kernels)
# NEUROC_HAVE_MPI only names the feature (nc_build_features): the MPI code
# itself lives outside the core (snn/base/mpi/, CMakeLists.txt).
# base/blas.c loads OpenBLAS itself (blas.h): its header, not its library
list(GET OPENBLAS_LIBRARY_DIRS 0 NC_OPENBLAS_LIBDIR)
nc_room(base DIR snn/base LIBS ${NC_LIBS_BLAS}
        DEFINES $<$<BOOL:${NEUROC_HAVE_CUDA}>:NEUROC_HAVE_CUDA=1> $<$<BOOL:${NEUROC_HAVE_MPI}>:NEUROC_HAVE_MPI=1>
                NC_OPENBLAS_LIBDIR="${NC_OPENBLAS_LIBDIR}")
nc_room(ir DIR snn/ir DEPS base kernels)
nc_room(run DIR snn/run DEPS ir base kernels LIBS ${NC_OMP})
# The module loader (snn/backends/module.c; the registry, snn/session/registry.c, calls it) looks
# for backend modules next to the core, in lib/neuroc of an install, and in
# the configured install folder.
include(GNUInstallDirs)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(NC_MODULE_DIR_FROM_BIN "${CMAKE_INSTALL_LIBDIR}/neuroc")
else()
  file(RELATIVE_PATH NC_MODULE_DIR_FROM_BIN "/p/${CMAKE_INSTALL_BINDIR}" "/p/${CMAKE_INSTALL_LIBDIR}/neuroc")
endif()
nc_room(backends DIR snn/backends DEPS run ir base kernels LIBS ${CMAKE_DL_LIBS}
        DEFINES $<$<BOOL:${NEUROC_HAVE_CUDA}>:NEUROC_HAVE_CUDA=1>
                NC_MODULE_INSTALL_DIR="${CMAKE_INSTALL_FULL_LIBDIR}/neuroc"
                NC_MODULE_DIR_FROM_BIN="${NC_MODULE_DIR_FROM_BIN}")
nc_room(cpu_ref DIR snn/backends/cpu_ref DEPS backends LIBS ${NC_OMP})
nc_room(cpu_fast DIR snn/backends/cpu_fast DEPS backends LIBS ${NC_OMP})
# cpu-fast's kernel sets vectorise the Nonlinear layers' loops
# (fast_nonlinear_impl.h): gcc at -O2 only with loop vectorisation asked
# for, and only without trapping math, which turns the selects of
# kernels/nonlinear.h's e^x and erf into blends (each lane computes both
# sides of a select; no float changes). clang does both by default.
set_source_files_properties(snn/backends/cpu_fast/fast_generic.c snn/backends/cpu_fast/fast_avx2.c
                            snn/backends/cpu_fast/fast_avx512.c PROPERTIES
                            COMPILE_OPTIONS "$<$<C_COMPILER_ID:GNU>:-ftree-loop-vectorize;-fno-trapping-math>")
# The core holds nothing of the cuda backend: it is the module
# libneuroc_cuda.so, which the registry (snn/session) opens with dlopen on
# first use, so neither the core library nor the program links a CUDA
# library. The room is the modules' include tree.
nc_room(cuda DIR snn/backends/cuda HEADERS_ONLY DEPS backends)
# Above every backend: the registry that names them, the sessions that pick
# one from it, the evaluator that runs sessions (DESIGN.md, "Layers").
nc_room(session DIR snn/session DEPS cpu_ref cpu_fast cuda backends run ir base kernels
        DEFINES $<$<BOOL:${NEUROC_HAVE_CUDA}>:NEUROC_HAVE_CUDA=1>)
if(NEUROC_HAVE_CUDA)
  set(NC_CUDA_DIR ${CMAKE_SOURCE_DIR}/snn/backends/cuda)
  # Two modules, compiled against the cuda room's include tree, each with the
  # bridge to the core's services (cuda_module.c: the host table of
  # module.h): libneuroc_cuda.so, the backend (kernels, host code, the
  # stateless weight layout; cudart, cuBLAS, cuSPARSE), and
  # libneuroc_cuda_probe.so, the device probe alone (cudart only), so that
  # asking whether cuda can run here (neuroc --version, nc_cuda_device_count)
  # does not map cuBLAS (~200 MB resident once loaded).
  add_library(neuroc_cuda MODULE ${NC_CUDA_DIR}/backend_cuda.c ${NC_CUDA_DIR}/cuda_kernels.cu
              ${NC_CUDA_DIR}/cuda_device.cu ${NC_CUDA_DIR}/cuda_module.c
              ${CMAKE_SOURCE_DIR}/snn/backends/weight_layout.c)
  target_link_libraries(neuroc_cuda PRIVATE CUDA::cudart CUDA::cublas CUDA::cusparse)
  add_library(neuroc_cuda_probe MODULE ${NC_CUDA_DIR}/cuda_device.cu ${NC_CUDA_DIR}/cuda_module.c)
  target_link_libraries(neuroc_cuda_probe PRIVATE CUDA::cudart)
  target_compile_definitions(neuroc_cuda_probe PRIVATE NC_CUDA_PROBE_ONLY=1)
  foreach(m neuroc_cuda neuroc_cuda_probe)
    target_include_directories(${m} PRIVATE ${CMAKE_BINARY_DIR}/rooms/cuda ${CMAKE_SOURCE_DIR}/include)
    target_compile_definitions(${m} PRIVATE NEUROC_HAVE_CUDA=1 NEUROC_VERSION="${PROJECT_VERSION}")
    # exports nc_backend_module_init only; every symbol is resolved at link time
    # (sanitizer runtimes are the loading program's, so not there)
    target_link_options(${m} PRIVATE "LINKER:--version-script=${NC_CUDA_DIR}/module.map")
    if(NOT NEUROC_SANITIZE AND NOT NEUROC_FUZZ)
      target_link_options(${m} PRIVATE "LINKER:--no-undefined")
    endif()
    # one shared CUDA runtime for both: the device the probe makes current is the backend's
    set_target_properties(${m} PROPERTIES PREFIX lib SUFFIX .so LINK_DEPENDS ${NC_CUDA_DIR}/module.map
                          CUDA_RUNTIME_LIBRARY Shared)
  endforeach()
  set(NC_CUDA_MODULES neuroc_cuda neuroc_cuda_probe)
endif()
# NC_CORE_OBJECTS: the core rooms' objects; NC_CORE_LINK_LIBS what they need.
get_property(NC_CORE_TARGETS GLOBAL PROPERTY NC_ROOM_TARGETS)
set(NC_CORE_OBJECTS "")
foreach(t ${NC_CORE_TARGETS})
  list(APPEND NC_CORE_OBJECTS $<TARGET_OBJECTS:${t}>)
endforeach()
set(NC_CORE_LINK_LIBS Threads::Threads ${MATH_LIB} ${NC_OMP} ${CMAKE_DL_LIBS})
