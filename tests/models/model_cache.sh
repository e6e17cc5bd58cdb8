# Sourced by the scripts whose tests need TF.js and the model corpus (run_conformance.sh,
# tests/tf/run_tfjs_gradients.sh). Sets CACHE (TFJIT_MODEL_CACHE, default
# ~/.cache/tfjit/models) and fills it with tests/models/fetch_models.sh. Exits 77 (ctest:
# skipped) with the reason only when node or npm is not installed; with both there, a cache
# that cannot be filled is a failure (a fresh machine must not skip silently).
CACHE=${TFJIT_MODEL_CACHE:-${HOME:-/root}/.cache/tfjit/models}
command -v node >/dev/null || { echo "SKIPPED: node is not installed (scripts/deps.sh installs it)"; exit 77; }
command -v npm >/dev/null || { echo "SKIPPED: npm is not installed (scripts/deps.sh installs it)"; exit 77; }
# A fresh HOME has no ~/.cache: the cache and its log's folder are made here.
if ! mkdir -p "$CACHE"; then
  echo "FAILED: cannot create the model cache '$CACHE' (set TFJIT_MODEL_CACHE to a writable folder)"
  exit 1
fi
if ! "$(dirname "${BASH_SOURCE[0]}")/fetch_models.sh" "$CACHE" >"$CACHE.fetch.log" 2>&1; then
  echo "FAILED: node and npm are installed but the model corpus and TF.js could not be fetched into $CACHE:"
  tail -5 "$CACHE.fetch.log"; exit 1
fi
