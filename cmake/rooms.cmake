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
#   nc_room(NAME DIR <folder> [HEADERS_ONLY] [DEPS room...] [CALLS room...]
#           [SOURCES file...] [EXCLUDE regex] [LIBS target...] [DEFINES def...])
#
# CALLS: rooms below it whose public functions (include/neuroc) it calls
# without including their headers (the simulator runs sessions): linked
# with it in the link check, absent from its include tree.
#
# Without SOURCES, the room's sources are the folder's *.c (and *.cu where
# CUDA is enabled), non-recursively; HEADERS_ONLY: none in the library (the
# room is its include tree, for code built apart: the CUDA module). The global property NC_ROOM_TARGETS
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
  cmake_parse_arguments(R "HEADERS_ONLY" "DIR;EXCLUDE" "DEPS;CALLS;SOURCES;LIBS;DEFINES" ${ARGN})
  foreach(d ${R_DEPS} ${R_CALLS})
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
  if(R_HEADERS_ONLY)
    set(srcs "")
  elseif(R_SOURCES)
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
  set_property(GLOBAL PROPERTY NC_ROOM_${name}_LIBS ${R_LIBS})
  nc_room_closure(linked ${name} ${R_CALLS})
  set_property(GLOBAL PROPERTY NC_ROOM_${name}_LINKED ${linked})
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

# After the last nc_room: the link check of every room (see the top).
# Skipped in sanitizer builds, whose objects need the sanitizer runtime
# of the program that loads them.
function(nc_room_link_checks)
  if(NEUROC_SANITIZE OR NEUROC_FUZZ)
    return()
  endif()
  get_property(targets GLOBAL PROPERTY NC_ROOM_TARGETS)
  set(checked "")
  foreach(t ${targets})
    string(REGEX REPLACE "^neuroc_room_" "" name ${t})
    list(APPEND checked ${name})
    get_property(closure GLOBAL PROPERTY NC_ROOM_${name}_LINKED)
    set(objects "")
    set(libs "")
    foreach(r ${closure})
      if(TARGET neuroc_room_${r})
        list(APPEND objects $<TARGET_OBJECTS:neuroc_room_${r}>)
        get_property(rlibs GLOBAL PROPERTY NC_ROOM_${r}_LIBS)
        list(APPEND libs ${rlibs})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES libs)
    add_library(neuroc_room_${name}_link SHARED ${objects})
    target_link_libraries(neuroc_room_${name}_link PRIVATE ${libs} Threads::Threads ${MATH_LIB} ${CMAKE_DL_LIBS})
    target_link_options(neuroc_room_${name}_link PRIVATE "LINKER:--no-undefined")
    set_target_properties(neuroc_room_${name}_link PROPERTIES OUTPUT_NAME neuroc_room_${name}
                          LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/rooms-link)
  endforeach()
  # the rooms checked, for tests/test_layering.sh
  string(REPLACE ";" "\n" checked "${checked}")
  file(WRITE ${CMAKE_BINARY_DIR}/rooms-link/rooms.txt "${checked}\n")
endfunction()
