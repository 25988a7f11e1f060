# shellcheck shell=bash
# Helpers every ops/ script shares: reading a flag's value, and configuring a build directory that
# may have come from another checkout. Source this file.

# flag_value SCRIPT FLAG [VALUE]: prints VALUE; when it is missing, empty or another flag
# ("--..."), says which flag needs one and fails. Use it as `x=$(flag_value ops/demo "$1" "${2-}"); shift` under `set -e`: the
# failed assignment stops the script.
flag_value() {
  if [ $# -lt 3 ] || [ -z "$3" ] || [[ "$3" == --* ]]; then
    echo "$1: $2 needs a value (see --help)" >&2
    return 2
  fi
  printf '%s\n' "$3"
}

# cmake_cache_value BUILD_DIR NAME: the value of NAME in BUILD_DIR/CMakeCache.txt, or nothing.
cmake_cache_value() {
  sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt" 2>/dev/null | head -n 1
}

# build_dir_check SCRIPT ROOT BUILD_DIR: makes BUILD_DIR usable by this checkout. A build
# directory copied or moved with the checkout (its cache names another directory) is set aside as
# BUILD_DIR.stale-<time> and a fresh one is configured; one that another checkout configured in
# place (same directory, other sources) is refused, since cmake would only fail with its raw cache
# error.
build_dir_check() {
  local script=$1 root=$2 build_dir=$3
  [ -f "$build_dir/CMakeCache.txt" ] || return 0
  local cache_dir home_dir
  cache_dir=$(cmake_cache_value "$build_dir" CMAKE_CACHEFILE_DIR)
  home_dir=$(cmake_cache_value "$build_dir" CMAKE_HOME_DIRECTORY)
  # The same directory however it is spelled (a symlink, a bind mount): -ef, not the text.
  if ! [ "$cache_dir" -ef "$build_dir" ]; then
    local aside
    aside=$build_dir.stale-$(date +%Y%m%d-%H%M%S)
    [ ! -e "$aside" ] || aside=$aside-$$
    echo "$script: ${build_dir#"$root"/} was configured as $cache_dir (a copied or moved" \
      "checkout): moving it to ${aside#"$root"/} and configuring afresh" >&2
    mv "$build_dir" "$aside"
  elif ! [ "$home_dir" -ef "$root" ]; then
    echo "$script: ${build_dir#"$root"/} holds a build of $home_dir, not of $root;" \
      "remove it or build elsewhere" >&2
    return 1
  fi
}

# cmake_configure SCRIPT ROOT BUILD_DIR [cmake options...]: build_dir_check, then configures
# BUILD_DIR with Ninja (quietly; cmake's output shows when it fails).
cmake_configure() {
  local script=$1 root=$2 build_dir=$3
  shift 3
  build_dir_check "$script" "$root" "$build_dir" || return 1
  local log
  log=$(cmake -S "$root" -B "$build_dir" -G Ninja "$@" 2>&1) || {
    printf '%s\n' "$log" >&2
    echo "$script: cmake could not configure ${build_dir#"$root"/}" >&2
    return 1
  }
}
