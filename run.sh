#!/usr/bin/env bash
# ./run.sh            installs what is missing, builds, and runs the demo model
# ./run.sh ARGS...    the same, then runs `tfjit ARGS...`
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$root/scripts/build.sh" --target tfjit >&2
bin="${TFJIT_BUILD_DIR:-$root/build}/bin/tfjit"
if [ $# -eq 0 ]; then
  exec "$bin" demo "$root/examples/models"
fi
exec "$bin" "$@"
