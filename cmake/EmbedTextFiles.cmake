# Build-time embedding of text files (SQL migrations, paytables) into the binary, so that the
# daemon never reads the source tree at run time.
#
# Script mode: cmake -DOUTPUT=<file.cc> -DINPUT_DIR=<dir> -DPATTERN=<glob> -DFUNCTION=<qualified
#   name> [-DNAME_REGEX=<regex>] -P EmbedTextFiles.cmake
# writes a C++ source defining
#   const std::vector<std::pair<std::string_view, std::string_view>>& FUNCTION();
# that returns (file name, text) for every matching file, sorted by name.
if(CMAKE_SCRIPT_MODE_FILE)
  file(GLOB names RELATIVE "${INPUT_DIR}" "${INPUT_DIR}/${PATTERN}")
  list(SORT names)
  set(body "")
  foreach(name ${names})
    if(DEFINED NAME_REGEX AND NOT name MATCHES "${NAME_REGEX}")
      message(FATAL_ERROR "${INPUT_DIR}/${name}: the file name does not match ${NAME_REGEX}")
    endif()
    file(READ "${INPUT_DIR}/${name}" text)
    if(text MATCHES "\\)jackpotd_embed\"")
      message(FATAL_ERROR "${name} contains the raw string delimiter )jackpotd_embed\"")
    endif()
    string(APPEND body "      {\"${name}\", R\"jackpotd_embed(${text})jackpotd_embed\"},\n")
  endforeach()
  string(REGEX MATCH "^(.*)::([^:]+)$" _ "${FUNCTION}")
  set(content "// Generated from ${INPUT_DIR}/${PATTERN} by cmake/EmbedTextFiles.cmake. Do not edit.
#include <string_view>
#include <utility>
#include <vector>

namespace ${CMAKE_MATCH_1} {

const std::vector<std::pair<std::string_view, std::string_view>>& ${CMAKE_MATCH_2}() {
  static const std::vector<std::pair<std::string_view, std::string_view>> files = {
${body}  };
  return files;
}

}  // namespace ${CMAKE_MATCH_1}
")
  # Only touch the output when it changes, so that a reconfigure does not rebuild.
  if(EXISTS "${OUTPUT}")
    file(READ "${OUTPUT}" old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${OUTPUT}" "${content}")
  return()
endif()

# jackpotd_embed_text_files(<out-var> DIR <dir> PATTERN <glob> FUNCTION <name> [NAME_REGEX <re>])
# Adds the generation step; <out-var> receives the generated source to add to a target.
function(jackpotd_embed_text_files out_var)
  cmake_parse_arguments(ARG "" "DIR;PATTERN;FUNCTION;NAME_REGEX" "" ${ARGN})
  file(GLOB inputs CONFIGURE_DEPENDS "${ARG_DIR}/${ARG_PATTERN}")
  string(REGEX REPLACE "[^A-Za-z0-9]+" "_" stem "${ARG_FUNCTION}")
  set(output "${CMAKE_CURRENT_BINARY_DIR}/${stem}.cc")
  # The list of inputs as a file that changes only when the list does: a file added, removed or
  # renamed (which may keep an old modification time) makes the step run again.
  set(list_file "${CMAKE_CURRENT_BINARY_DIR}/${stem}.inputs")
  string(REPLACE ";" "\n" listed "${inputs}")
  file(CONFIGURE OUTPUT "${list_file}" CONTENT "${listed}\n" @ONLY)
  set(name_regex_arg)
  if(ARG_NAME_REGEX)
    set(name_regex_arg "-DNAME_REGEX=${ARG_NAME_REGEX}")
  endif()
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" "-DOUTPUT=${output}" "-DINPUT_DIR=${ARG_DIR}"
            "-DPATTERN=${ARG_PATTERN}" "-DFUNCTION=${ARG_FUNCTION}" ${name_regex_arg}
            -P "${PROJECT_SOURCE_DIR}/cmake/EmbedTextFiles.cmake"
    DEPENDS ${inputs} "${list_file}" "${PROJECT_SOURCE_DIR}/cmake/EmbedTextFiles.cmake"
    COMMENT "Embedding ${ARG_DIR}/${ARG_PATTERN}"
    VERBATIM)
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()
