#===- HeteroMacros.cmake - helpers shared by the hetero build ------------===#

# hetero_add_library(name SOURCES... [DEPENDS tgt...] [LINK_LIBS lib...]
#                    [MLIR_LIBS lib...])
#
# A static library that is exported with the installed CMake package.
# MLIR_LIBS names the MLIR components the library uses; they are all linked
# through libMLIR.so and libLLVM.so, so no static MLIR archive is ever mixed
# with the dylib. The objects are also
# available as obj.<name>, from which the self-contained C API library is
# assembled.
function(hetero_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS;MLIR_LIBS" ${ARGN})
  add_library(obj.${name} OBJECT ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(obj.${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(obj.${name} PUBLIC
    ${HETERO_SOURCE_DIR}/include ${HETERO_BINARY_DIR}/include)
  add_library(${name} STATIC $<TARGET_OBJECTS:obj.${name}>)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${HETERO_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${HETERO_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  if(ARG_DEPENDS)
    add_dependencies(obj.${name} ${ARG_DEPENDS})
  endif()
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
  endif()
  if(ARG_MLIR_LIBS)
    target_link_libraries(${name} PUBLIC MLIR LLVM)
  endif()
  set_property(GLOBAL APPEND PROPERTY HETERO_EXPORTED_TARGETS ${name})
endfunction()

# hetero_add_tool(name SOURCES... [LINK_LIBS lib...] [MLIR_LIBS lib...])
function(hetero_add_tool name)
  cmake_parse_arguments(ARG "" "" "LINK_LIBS;MLIR_LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  llvm_update_compile_flags(${name})
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PRIVATE ${ARG_LINK_LIBS})
  endif()
  if(ARG_MLIR_LIBS)
    target_link_libraries(${name} PRIVATE MLIR LLVM)
  endif()
  install(TARGETS ${name} RUNTIME DESTINATION bin)
endfunction()
