# The library's rooms (README "Layout"): one OBJECT library per folder, each
# declaring the rooms below it that it may include. A room compiles against
# an include tree of its own in the build folder, holding links to the
# headers of itself and of the rooms it may reach (transitively) and nothing
# else, so an include that runs the wrong way fails to compile: the header is
# simply not there. Headers are linked one by one, not as folders, so that a
# room (snn/backends) does not expose the rooms nested in it
# (snn/backends/cuda). Sources include other rooms' headers by their path
# from the repository root ("snn/base/alloc.h") and their own by bare name;
# tests/test_layering.sh refuses "../" in an include.
#
#   nc_room(NAME DIR <folder> [DEPS room...] [SOURCES file...] [EXCLUDE regex]
#           [LIBS target...] [DEFINES def...])
#
# Without SOURCES, the room's sources are the folder's *.c (and *.cu where
# CUDA is enabled), non-recursively. The global property NC_ROOM_TARGETS
# lists the rooms' object libraries; NC_ROOM_<name>_CLOSURE (global
# property) the rooms a room may reach.

function(nc_room_closure out)
  set(result "")
  set(todo ${ARGN})
  while(todo)
    list(POP_FRONT todo r)
    if(NOT r IN_LIST result)
      list(APPEND result ${r})
      get_property(deps GLOBAL PROPERTY NC_ROOM_${r}_DEPS)
      list(APPEND todo ${deps})
    endif()
  endwhile()
  set(${out} ${result} PARENT_SCOPE)
endfunction()

# Links every header of room `r` into the include tree `tree`.
function(nc_room_link_headers tree r)
  get_property(dir GLOBAL PROPERTY NC_ROOM_${r}_DIR)
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${dir}/*.h)
  file(MAKE_DIRECTORY ${tree}/${dir})
  foreach(h ${headers})
    get_filename_component(base ${h} NAME)
    if(NOT EXISTS ${tree}/${dir}/${base})
      file(CREATE_LINK ${h} ${tree}/${dir}/${base} SYMBOLIC)
    endif()
  endforeach()
endfunction()

function(nc_room name)
  cmake_parse_arguments(R "" "DIR;EXCLUDE" "DEPS;SOURCES;LIBS;DEFINES" ${ARGN})
  foreach(d ${R_DEPS})
    get_property(known GLOBAL PROPERTY NC_ROOM_${d}_DIR SET)
    if(NOT known)
      message(FATAL_ERROR "room ${name}: depends on ${d}, which is not declared before it")
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY NC_ROOM_${name}_DIR ${R_DIR})
  set_property(GLOBAL PROPERTY NC_ROOM_${name}_DEPS ${R_DEPS})
  nc_room_closure(closure ${name})
  set_property(GLOBAL PROPERTY NC_ROOM_${name}_CLOSURE ${closure})
  set(tree ${CMAKE_BINARY_DIR}/rooms/${name})
  file(REMOVE_RECURSE ${tree})
  foreach(r ${closure})
    nc_room_link_headers(${tree} ${r})
  endforeach()
  if(R_SOURCES)
    set(srcs ${R_SOURCES})
  else()
    file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${R_DIR}/*.c)
    if(CMAKE_CUDA_COMPILER AND NEUROC_HAVE_CUDA)
      file(GLOB cu CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${R_DIR}/*.cu)
      list(APPEND srcs ${cu})
    endif()
  endif()
  if(R_EXCLUDE)
    list(FILTER srcs EXCLUDE REGEX "${R_EXCLUDE}")
  endif()
  set(target neuroc_room_${name})
  if(srcs)
    add_library(${target} OBJECT ${srcs})
    target_include_directories(${target} PRIVATE ${tree} ${CMAKE_SOURCE_DIR}/include)
    target_compile_definitions(${target} PRIVATE NEUROC_VERSION="${PROJECT_VERSION}")
    target_compile_definitions(${target} PRIVATE ${R_DEFINES})
    target_link_libraries(${target} PRIVATE ${R_LIBS})
    set_property(GLOBAL APPEND PROPERTY NC_ROOM_TARGETS ${target})
  endif()
endfunction()
