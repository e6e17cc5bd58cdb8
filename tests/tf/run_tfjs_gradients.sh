#!/usr/bin/env bash
# tfjs_gradient_test with TF.js's results (tests/tf/tfjs_gradients.mjs):
#   tests/tf/run_tfjs_gradients.sh TFJS_GRADIENT_TEST_BINARY
# TF.js comes from the model cache (TFJIT_MODEL_CACHE, default ~/.cache/tfjit/models) that
# tests/models/fetch_models.sh fills, as for the model conformance test. Exits 77 (ctest:
# skipped) with the reason only when node or npm is not installed.
set -uo pipefail
BIN=${1:?usage: run_tfjs_gradients.sh TFJS_GRADIENT_TEST}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../models/model_cache.sh
source "$HERE/../models/model_cache.sh"
refs=$(mktemp)
trap 'rm -f "$refs"' EXIT
if ! node "$HERE/tfjs_gradients.mjs" "$CACHE" >"$refs" 2>"$refs.err"; then
  echo "FAILED: tfjs_gradients.mjs:"; tail -5 "$refs.err"; rm -f "$refs.err"; exit 1
fi
rm -f "$refs.err"
TFJIT_TFJS_GRADIENTS="$refs" "$BIN"
