#!/usr/bin/env bash
# Latency of the real-model corpus (tests/models/models.tsv): tfjit with --jit off and
# --jit auto at 1 and 2 threads (`tfjit bench`), and TF.js's WASM backend (XNNPACK, one thread)
# in the same run, as a markdown table.
#
#   bench/corpus_bench.sh [REPORT.md]       (default: build/corpus-bench.md)
#
# Environment: TFJIT_MODEL_CACHE (default ~/.cache/tfjit/models), TFJIT_MODELS (comma-separated
# ids, default all), TFJIT_BENCH_REPEAT (timed runs per mode, default 20), TFJIT_BIN (default
# build/bin/tfjit). Inputs: random; -1 dims are 1, except the image sizes models.tsv gives.
# Speed ratios are medians; this machine's runs vary by 10-30% (docs/PERFORMANCE.md).
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
REPORT=${1:-$HERE/build/corpus-bench.md}
CACHE=${TFJIT_MODEL_CACHE:-${HOME:-/root}/.cache/tfjit/models}
BIN=${TFJIT_BIN:-$HERE/build/bin/tfjit}
REPEAT=${TFJIT_BENCH_REPEAT:-20}
PEAK=270  # GFLOP/s: one core's float32 FMA peak here (shared toolchain notes)

[ -x "$BIN" ] || { echo "corpus_bench: build first ($BIN is missing)"; exit 1; }
"$HERE/tests/models/fetch_models.sh" "$CACHE" >/dev/null || { echo "corpus_bench: cannot fetch the corpus"; exit 1; }
if [ ! -f "$CACHE/node_modules/@tensorflow/tfjs-backend-wasm/package.json" ]; then
  npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error \
    "@tensorflow/tfjs-backend-wasm@4.22.0" >/dev/null || { echo "corpus_bench: npm failed"; exit 1; }
fi

# The first value after `key` in a line of `tfjit bench` output.
field() { sed -n "s/.* $2 *\([0-9.][0-9.]*\) ms.*/\1/p" <<<" $1" | head -1; }

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
# The list comes in on fd 3: node and tfjit must not read it from stdin.
while IFS=$'\t' read -r -u 3 id model tol extra; do
  [[ -z "$id" || "$id" == \#* ]] && continue
  if [ -n "${TFJIT_MODELS:-}" ] && [[ ",$TFJIT_MODELS," != *",$id,"* ]]; then continue; fi
  path="$CACHE/models/$model"
  # The input shapes and value ranges models.tsv gives TF.js (--shape NAME=dims, --range
  # NAME=lo,hi) become tfjit's --shape (random values) or, with a range, a float .npy input
  # file; TF.js gets the same arguments.
  tmp=$(mktemp -d)
  mapfile -t inputs < <(python3 - "$tmp" $extra <<'PY'
import struct, sys
out, args = sys.argv[1], sys.argv[2:]
shapes, ranges = {}, {}
for flag, value in zip(args[::2], args[1::2]):
    name, _, v = value.rpartition('=')
    if flag == '--shape':
        shapes[name] = [int(d) for d in v.split(',') if d]
    elif flag == '--range':
        ranges[name] = [float(x) for x in v.split(',')]
for name, dims in shapes.items():
    if name not in ranges:  # random values of the model's dtype, this shape
        print('--shape')
        print(f"{name}={','.join(map(str, dims))}")
        continue
    lo, hi = ranges[name]  # float inputs held at a value range (rvm's state, its ratio)
    n = 1
    for d in dims:
        n *= d
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ''.join(f'{d}, ' for d in dims)
    header += ' ' * ((64 - (len(header) + 11) % 64) % 64) + '\n'
    with open(f'{out}/{name}.npy', 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode())
        f.write(struct.pack('<%df' % n, *[lo + (hi - lo) * ((i * 2654435761) % 1000) / 1000.0 for i in range(n)]))
    print('--input')
    print(f'{name}={out}/{name}.npy')
PY
)
  tfjs_args=()
  for s in $extra; do
    case "$s" in --shape|--range) tfjs_args+=("$s") ;; --*) skip=1 ;; *) [ "${skip:-0}" = 1 ] && skip=0 || tfjs_args+=("$s") ;; esac
  done
  # The 1-thread run compiles into an empty disk cache (cold); the 2-thread run, a new
  # process, loads from it (warm start).
  one=$("$BIN" bench "$path" --threads 1 --repeat "$REPEAT" --cache-dir "$tmp/objects" "${inputs[@]}" 2>/dev/null)
  two=$("$BIN" bench "$path" --threads 2 --repeat "$REPEAT" --cache-dir "$tmp/objects" "${inputs[@]}" 2>/dev/null)
  rm -rf "$tmp"
  wasm=$(node "$HERE/bench/tfjs_wasm_latency.mjs" --cache "$CACHE" --model "$model" \
           --runs 10 --warmup 2 "${tfjs_args[@]}" 2>/dev/null | sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p')
  off1=$(field "$(grep '^jit=off' <<<"$one")" median)
  auto1=$(field "$(grep '^jit=auto' <<<"$one")" median)
  compile=$(field "$(grep '^jit=auto' <<<"$one")" compile)
  warm=$(field "$(grep '^jit=auto' <<<"$two")" compile)
  off2=$(field "$(grep '^jit=off' <<<"$two")" median)
  auto2=$(field "$(grep '^jit=auto' <<<"$two")" median)
  gflop=$(sed -n 's/.*: \([0-9.]*\) GFLOP per run.*/\1/p' <<<"$one")
  if [ -z "$auto1" ] || [ -z "$auto2" ] || [ -z "$off1" ] || [ -z "$off2" ]; then
    printf '| %s | failed: see `tfjit bench` |\n' "$id" >>"$rows"
    continue
  fi
  python3 - "$id" "${gflop:-0}" "$off1" "$auto1" "$off2" "$auto2" "${wasm:-}" "$compile" "$PEAK" \
    "${warm:-0}" >>"$rows" <<'PY'
import sys
id_, gflop, off1, auto1, off2, auto2, wasm, compile_ms, peak, warm = sys.argv[1:]
gflop, off1, auto1, off2, auto2, compile_ms, peak, warm = map(
    float, (gflop, off1, auto1, off2, auto2, compile_ms, peak, warm))
w = float(wasm) if wasm else None
rate = gflop / (auto1 / 1e3) if gflop > 0 else 0
cells = [id_, f"{gflop:.3f}", f"{off1:.2f}", f"{auto1:.2f}", f"{off2:.2f}", f"{auto2:.2f}",
         f"{w:.2f}" if w else "-", f"{w / auto1:.2f}x" if w else "-", f"{w / auto2:.2f}x" if w else "-",
         f"{off1 / auto1:.2f}x", f"{rate:.0f} ({100 * rate / peak:.0f}%)", f"{compile_ms:.0f}",
         f"{warm:.0f} ({100 * warm / compile_ms:.0f}%)" if compile_ms > 0 else "-"]
print("| " + " | ".join(cells) + " |")
PY
done 3<"$HERE/tests/models/models.tsv"

{
  echo "# Corpus latency: tfjit vs TF.js WASM"
  echo
  echo "Written by \`bench/corpus_bench.sh\` on $(date -u +%Y-%m-%d) ($(nproc) cores). Medians of"
  echo "$REPEAT runs (tfjit, after the first run and 2 warm-ups) and of 10 runs (TF.js 4.22.0 WASM,"
  echo "XNNPACK, SIMD, one thread, after 2 warm-ups). GFLOP: the compiled convolutions and dots;"
  echo "GFLOP/s at jit=auto, 1 thread, and its share of one core's FMA peak ($PEAK GFLOP/s)."
  echo
  echo "Compile: cold, into an empty disk cache (\`--cache-dir\`); warm: a second process loading"
  echo "it (lowering, HLO passes, key, load and link), and its share of cold."
  echo
  echo "| model | GFLOP | off 1T ms | auto 1T ms | off 2T ms | auto 2T ms | WASM ms | WASM / auto 1T | WASM / auto 2T | auto vs off 1T | GFLOP/s 1T | compile ms | warm start ms |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  cat "$rows"
} >"$REPORT"
echo "report written to $REPORT"
