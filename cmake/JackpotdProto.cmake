# jackpotd_proto_library(<name> ROOT <dir> PROTOS <file.proto>... [GRPC] [DEPENDS <target>...])
#
# Generates C++ for the given .proto files (paths relative to ROOT) and builds them into a static
# library <name>. With GRPC, also generates and compiles the gRPC stubs (*.grpc.pb.cc). Generated
# headers are exposed as SYSTEM includes so that project warning flags do not apply to them.
# An explicit add_custom_command is used because protobuf_generate() in CMake 3.25 places outputs
# under an unexpected relative path.
function(jackpotd_proto_library name)
  cmake_parse_arguments(ARG "GRPC" "ROOT" "PROTOS;DEPENDS" ${ARGN})
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/gen")
  file(MAKE_DIRECTORY "${out_dir}")
  set(srcs)
  set(import_flags "-I${ARG_ROOT}")
  foreach(dep ${ARG_DEPENDS})
    get_target_property(dep_root ${dep} JACKPOTD_PROTO_ROOT)
    list(APPEND import_flags "-I${dep_root}")
  endforeach()
  foreach(proto ${ARG_PROTOS})
    string(REGEX REPLACE "\\.proto$" "" stem "${proto}")
    set(outputs "${out_dir}/${stem}.pb.cc" "${out_dir}/${stem}.pb.h")
    set(plugin_args)
    if(ARG_GRPC)
      list(APPEND outputs "${out_dir}/${stem}.grpc.pb.cc" "${out_dir}/${stem}.grpc.pb.h")
      set(plugin_args "--grpc_out=${out_dir}"
                      "--plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>")
    endif()
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND protobuf::protoc ${import_flags} "--cpp_out=${out_dir}" ${plugin_args}
              "${ARG_ROOT}/${proto}"
      DEPENDS "${ARG_ROOT}/${proto}" protobuf::protoc
      COMMENT "protoc ${proto}"
      VERBATIM)
    list(APPEND srcs "${out_dir}/${stem}.pb.cc")
    if(ARG_GRPC)
      list(APPEND srcs "${out_dir}/${stem}.grpc.pb.cc")
    endif()
  endforeach()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} SYSTEM PUBLIC "${out_dir}")
  target_link_libraries(${name} PUBLIC protobuf::libprotobuf ${ARG_DEPENDS})
  if(ARG_GRPC)
    target_link_libraries(${name} PUBLIC gRPC::grpc++)
  endif()
  set_target_properties(${name} PROPERTIES JACKPOTD_PROTO_ROOT "${ARG_ROOT}")
endfunction()
