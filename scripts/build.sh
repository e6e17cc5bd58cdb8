#!/usr/bin/env bash
# Configures (once) and builds tfjit incrementally into build/ (or $TFJIT_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFJIT_BUILD_DIR:-$root/build}"
"$root/scripts/deps.sh"
if [ ! -f "$build/build.ninja" ]; then
  # TFJIT_CMAKE_ARGS: extra configure arguments (test.sh sets the sanitizer ones).
  # shellcheck disable=SC2086
  eval cmake -S '"$root"' -B '"$build"' -G Ninja -DCMAKE_BUILD_TYPE="${TFJIT_BUILD_TYPE:-Release}" \
    "${TFJIT_CMAKE_ARGS:-}" >/dev/null
fi
jobs="${TFJIT_JOBS:-$(nproc)}"
cmake --build "$build" -j "$jobs" "$@"
