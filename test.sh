#!/usr/bin/env bash
# ./test.sh           installs what is missing, builds everything, runs every test (ctest)
# ./test.sh ARGS...   extra ctest arguments, e.g. ./test.sh -R hlo
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$root/scripts/build.sh"
cd "${TFJIT_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "${TFJIT_JOBS:-$(nproc)}" "$@"
