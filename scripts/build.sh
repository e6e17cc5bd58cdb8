#!/usr/bin/env bash
# Configures (once) and builds tfjit incrementally into build/ (or $TFJIT_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TFJIT_BUILD_DIR:-$root/build}"
"$root/scripts/deps.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${TFJIT_BUILD_TYPE:-Release}" >/dev/null
fi
jobs="${TFJIT_JOBS:-$(nproc)}"
cmake --build "$build" -j "$jobs" "$@"
