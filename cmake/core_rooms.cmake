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
nc_room(base DIR snn/base
        DEFINES $<$<BOOL:${NEUROC_HAVE_CUDA}>:NEUROC_HAVE_CUDA=1> $<$<BOOL:${NEUROC_HAVE_MPI}>:NEUROC_HAVE_MPI=1>)
nc_room(ir DIR snn/ir DEPS base kernels)
nc_room(run DIR snn/run DEPS ir base kernels LIBS ${NC_OMP})
nc_room(backends DIR snn/backends DEPS run ir base kernels)
nc_room(cpu_ref DIR snn/backends/cpu_ref DEPS backends LIBS ${NC_OMP})
nc_room(cpu_fast DIR snn/backends/cpu_fast DEPS backends LIBS ${NC_OMP})
if(NEUROC_HAVE_CUDA)
  nc_room(cuda DIR snn/backends/cuda DEPS backends EXCLUDE "/cuda_absent\\.c$"
          LIBS CUDA::cudart CUDA::cublas CUDA::cusparse DEFINES NEUROC_HAVE_CUDA=1)
else()
  nc_room(cuda DIR snn/backends/cuda DEPS backends SOURCES ${CMAKE_SOURCE_DIR}/snn/backends/cuda/cuda_absent.c)
endif()
# NC_CORE_OBJECTS: the core rooms' objects; NC_CORE_LINK_LIBS what they need.
get_property(NC_CORE_TARGETS GLOBAL PROPERTY NC_ROOM_TARGETS)
set(NC_CORE_OBJECTS "")
foreach(t ${NC_CORE_TARGETS})
  list(APPEND NC_CORE_OBJECTS $<TARGET_OBJECTS:${t}>)
endforeach()
set(NC_CORE_LINK_LIBS Threads::Threads ${MATH_LIB} ${NC_OMP})
if(NEUROC_HAVE_CUDA)
  list(APPEND NC_CORE_LINK_LIBS CUDA::cudart CUDA::cublas CUDA::cusparse)
endif()
