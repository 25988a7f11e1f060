# cmake -DOUTPUT=<file.cc> -DINPUT_DIR=<dir> -P EmbedMigrations.cmake
#
# Writes a C++ source that defines jackpot::storage::embedded_migrations() from the SQL files
# in INPUT_DIR, so that the daemon carries its schema and never reads the source tree at run time.
file(GLOB sql_files RELATIVE "${INPUT_DIR}" "${INPUT_DIR}/*.sql")
list(SORT sql_files)
set(body "")
foreach(name ${sql_files})
  if(NOT name MATCHES "^([0-9][0-9][0-9][0-9])_[a-z0-9_]+\\.sql$")
    message(FATAL_ERROR "migration file name ${name} is not NNNN_lower_snake.sql")
  endif()
  math(EXPR version "${CMAKE_MATCH_1}")
  file(READ "${INPUT_DIR}/${name}" sql)
  if(sql MATCHES "\\)jackpotd_sql\"")
    message(FATAL_ERROR "${name} contains the raw string delimiter )jackpotd_sql\"")
  endif()
  string(APPEND body "      {${version}, \"${name}\", R\"jackpotd_sql(${sql})jackpotd_sql\"},\n")
endforeach()
set(content "// Generated from storage/migrations/*.sql by cmake/EmbedMigrations.cmake. Do not edit.
#include \"storage/migrations.h\"

namespace jackpot::storage {

const std::vector<Migration>& embedded_migrations() {
  static const std::vector<Migration> migrations = {
${body}  };
  return migrations;
}

}  // namespace jackpot::storage
")
# Only touch the output when it changes, so an unrelated reconfigure does not rebuild.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${content}")
