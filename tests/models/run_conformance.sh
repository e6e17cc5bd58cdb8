#!/usr/bin/env bash
# Real-model conformance against TF.js's CPU backend (see docs/testing.md).
#
#   tests/models/run_conformance.sh MODEL_CONFORMANCE_BINARY REPORT.md
#
# Environment: TFJIT_MODEL_CACHE (default ~/.cache/tfjit/models), TFJIT_MODELS (comma-separated
# ids, default all), TFJIT_MODEL_SEED (default 1), TFJIT_MODEL_FILL_DIM (size of -1 dims,
# default 1), TFJIT_MODEL_JIT (default off,auto,auto+autofix).
# Exits 77 (ctest: skipped) with the reason only when node or npm is not installed; with both
# there, a corpus that cannot be fetched is a failure (a fresh machine must not skip silently).
set -uo pipefail
BIN=${1:?usage: run_conformance.sh MODEL_CONFORMANCE REPORT}
REPORT=${2:?usage: run_conformance.sh MODEL_CONFORMANCE REPORT}
HERE=$(cd "$(dirname "$0")" && pwd)
SEED=${TFJIT_MODEL_SEED:-1}
FILL=${TFJIT_MODEL_FILL_DIM:-1}
# shellcheck source=model_cache.sh
source "$HERE/model_cache.sh"

list=$(mktemp)
trap 'rm -f "$list"' EXIT
status=0
while IFS=$'\t' read -r id model tol extra; do
  [[ -z "$id" || "$id" == \#* ]] && continue
  if [ -n "${TFJIT_MODELS:-}" ] && [[ ",$TFJIT_MODELS," != *",$id,"* ]]; then continue; fi
  path="$CACHE/models/$model"
  # The reference depends on the model file, the seed, the fill size and the extra arguments.
  key=$(cat "$path" <(echo "$SEED $FILL $extra") "$HERE/tfjs_reference.mjs" | sha256sum | cut -c1-12)
  ref="$CACHE/refs/$id-$key"
  mkdir -p "$CACHE/refs"
  if [ ! -f "$ref/reference.json" ]; then
    # shellcheck disable=SC2086
    if ! node "$HERE/tfjs_reference.mjs" --cache "$CACHE" --model "$model" --out "$ref.partial" \
         --seed "$SEED" --fill-dim "$FILL" $extra >"$ref.log" 2>&1; then
      echo "$id: TF.js reference failed:"; grep -v "^\(====\|Hi, looks\)" "$ref.log" | tail -5
      status=1
      continue
    fi
    rm -rf "$ref" && mv "$ref.partial" "$ref"
  fi
  printf '%s\t%s\t%s\t%s\n' "$id" "$path" "$ref" "$tol" >>"$list"
done <"$HERE/models.tsv"

# faceboxes, handtrack and rvm (a TF1 batch-NMS loop, NMS post-processing, TF1 conds whose
# branches differ in shape) compile every node with the beyond-TF fixes (issue 21).
"$BIN" --list "$list" --report "$REPORT.table" --jit "${TFJIT_MODEL_JIT:-off,auto,auto+autofix}" \
  --expect-whole faceboxes,handtrack,rvm || status=1
{
  echo "# Real-model conformance: tfjit vs TensorFlow.js 4.22.0 (CPU backend)"
  echo
  echo "Written by \`tests/models/run_conformance.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores;"
  echo "inputs: seed $SEED, \`-1\` dims = $FILL. normErr = max |tfjit - TF.js| / max |TF.js| over"
  echo "all compared outputs. clusters and % compiled are each jit mode's last run (the steady"
  echo "state); latency is the median of 3 runs after the first, which includes compilation. TF.js cpu ms"
  echo "is its pure-JS reference backend's first run (a correctness oracle, not a speed peer)."
  echo
  cat "$REPORT.table"
} >"$REPORT"
rm -f "$REPORT.table"
echo "report written to $REPORT"
exit $status
