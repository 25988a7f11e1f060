# shellcheck shell=bash
# The fuzz build, shared by ops/fuzz and ops/test: clang-16 with libFuzzer, ASan and UBSan
# (-DJACKPOTD_FUZZ=ON), in build/fuzz. Only what the targets of tests/fuzz need is built. Needs
# lib/common.sh sourced first.

# Configures (once) and builds build/fuzz; prints its path. Build output goes to stderr. Fails
# when the build does: callers run it in $(...), where `set -e` does not reach (bash does not
# pass errexit into command substitutions), so every step returns its own failure.
fuzz_build() {
  local root=$1
  local build_dir=$root/build/fuzz
  build_dir_check ops "$root" "$build_dir" || return 1
  if [ ! -f "$build_dir/build.ninja" ]; then
    cmake -S "$root" -B "$build_dir" -G Ninja -DJACKPOTD_FUZZ=ON \
      -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2 || return 1
  fi
  cmake --build "$build_dir" -j "$(nproc)" >&2 || return 1
  echo "$build_dir"
}
