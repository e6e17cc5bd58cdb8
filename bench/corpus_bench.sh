#!/usr/bin/env bash
# Latency of the real-model corpus (tests/models/models.tsv): tfjit with --jit off and
# --jit auto at 1 and 2 threads (`tfjit bench`), TF.js's WASM backend (XNNPACK, one thread) and
# ONNX Runtime's CPU EP at 1 and 2 threads (the models converted by shared/tools/ort, whose
# README says how; models it cannot convert get "-"), model by model in the same run, as a
# markdown table headed by the CPU and its vector ISA.
#
#   bench/corpus_bench.sh [REPORT.md]       (default: build/corpus-bench.md)
#
# Environment: TFJIT_MODEL_CACHE (default ~/.cache/tfjit/models), TFJIT_MODELS (comma-separated
# ids, default all), TFJIT_BENCH_REPEAT (timed runs per mode, default 20), TFJIT_BIN (default
# build/bin/tfjit), TFJIT_ORT_TOOLS (default ../shared/tools/ort beside the project). Inputs: random; -1 dims are 1, except the image sizes models.tsv gives.
# Speed ratios are medians; this machine's runs vary by 10-30% (docs/PERFORMANCE.md).
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
REPORT=${1:-$HERE/build/corpus-bench.md}
CACHE=${TFJIT_MODEL_CACHE:-${HOME:-/root}/.cache/tfjit/models}
BIN=${TFJIT_BIN:-$HERE/build/bin/tfjit}
REPEAT=${TFJIT_BENCH_REPEAT:-20}
# One core's float32 FMA peak, measured on this machine (kernel_bench's BM_FmaPeak: 12 chains of
# FMAs in the widest vectors the CPU has); 270 GFLOP/s (a Zen 5 core's, measured) without it.
PEAK=$("$(dirname "$BIN")/kernel_bench" --benchmark_filter=BM_FmaPeak --benchmark_min_time=0.3 \
         --benchmark_format=json 2>/dev/null |
       python3 -c "import json,sys; print('%.0f' % json.load(sys.stdin)['benchmarks'][0]['GFLOP/s'])" \
         2>/dev/null)
PEAK_HOW="measured by kernel_bench's BM_FmaPeak"
[ -n "$PEAK" ] || { PEAK=270; PEAK_HOW="kernel_bench missing: a Zen 5 core's, measured earlier"; }

ORT_TOOLS=${TFJIT_ORT_TOOLS:-$HERE/../shared/tools/ort}
ORT_DIR=$CACHE/ort-tools  # a copy of the tools with their npm packages, and the converted models

[ -x "$BIN" ] || { echo "corpus_bench: build first ($BIN is missing)"; exit 1; }
"$HERE/tests/models/fetch_models.sh" "$CACHE" >/dev/null || { echo "corpus_bench: cannot fetch the corpus"; exit 1; }
if [ ! -f "$CACHE/node_modules/@tensorflow/tfjs-backend-wasm/package.json" ]; then
  npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error \
    "@tensorflow/tfjs-backend-wasm@4.22.0" >/dev/null || { echo "corpus_bench: npm failed"; exit 1; }
fi

# ONNX Runtime: the shared tools copied into the cache (Node resolves their packages from there;
# the shared folder stays read-only) and `npm install`ed, once. Without them, no ORT columns.
ort_ok=0
if [ -f "$ORT_TOOLS/ort_latency.mjs" ]; then
  mkdir -p "$ORT_DIR/onnx"
  cp "$ORT_TOOLS"/*.mjs "$ORT_TOOLS"/*.proto "$ORT_TOOLS"/package*.json "$ORT_DIR"/
  if [ -f "$ORT_DIR/node_modules/onnxruntime-node/package.json" ] ||
     (cd "$ORT_DIR" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund \
        --loglevel=error >/dev/null); then
    ort_ok=1
  else
    echo "corpus_bench: npm install of the ORT tools failed; no ORT columns"
  fi
else
  echo "corpus_bench: $ORT_TOOLS not found; no ORT columns"
fi
# ORT's median ms for model id $1 (converted once, with the --shape arguments $3...) at $2
# threads; empty when it cannot be converted or run.
ort_ms() {
  local id=$1 threads=$2; shift 2
  local onnx="$ORT_DIR/onnx/$id.onnx"
  [ "$ort_ok" = 1 ] || return 0
  if [ ! -f "$onnx" ] && [ ! -f "$onnx.failed" ]; then
    node "$ORT_DIR/tfjs_to_onnx.mjs" --model "$path" --out "$onnx" "$@" >/dev/null 2>&1 ||
      { rm -f "$onnx"; touch "$onnx.failed"; }
  fi
  [ -f "$onnx" ] || return 0
  node "$ORT_DIR/ort_latency.mjs" --model "$onnx" --threads "$threads" --runs "$REPEAT" \
    2>/dev/null | sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p' | tail -1
}

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
  ort_shapes=()
  set -- $extra
  while [ $# -ge 2 ]; do
    [ "$1" = --shape ] && ort_shapes+=(--shape "$2")
    shift 2
  done
  ort1=$(ort_ms "$id" 1 "${ort_shapes[@]}")
  ort2=$(ort_ms "$id" 2 "${ort_shapes[@]}")
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
    "${warm:-0}" "${ort1:-}" "${ort2:-}" >>"$rows" <<'PY'
import sys
id_, gflop, off1, auto1, off2, auto2, wasm, compile_ms, peak, warm, ort1, ort2 = sys.argv[1:]
gflop, off1, auto1, off2, auto2, compile_ms, peak, warm = map(
    float, (gflop, off1, auto1, off2, auto2, compile_ms, peak, warm))
w = float(wasm) if wasm else None
rate = gflop / (auto1 / 1e3) if gflop > 0 else 0
cells = [id_, f"{gflop:.3f}", f"{off1:.2f}", f"{auto1:.2f}", f"{off2:.2f}", f"{auto2:.2f}",
         f"{w:.2f}" if w else "-", f"{w / auto1:.2f}x" if w else "-", f"{w / auto2:.2f}x" if w else "-",
         f"{off1 / auto1:.2f}x", f"{rate:.0f} ({100 * rate / peak:.0f}%)", f"{compile_ms:.0f}",
         f"{warm:.0f} ({100 * warm / compile_ms:.0f}%)" if compile_ms > 0 else "-"]
for ort, auto in ((ort1, auto1), (ort2, auto2)):
    cells.append(f"{float(ort):.2f}" if ort else "-")
for ort, auto in ((ort1, auto1), (ort2, auto2)):
    cells.append(f"{float(ort) / auto:.2f}x" if ort else "-")
print("| " + " | ".join(cells) + " |")
PY
done 3<"$HERE/tests/models/models.tsv"

{
  echo "# Corpus latency: tfjit vs TF.js WASM and ONNX Runtime"
  echo
  echo "Written by \`bench/corpus_bench.sh\` on $(date -u +%Y-%m-%d) ($(nproc) cores). Medians of"
  echo "$REPEAT runs (tfjit, after the first run and 2 warm-ups) and of 10 runs (TF.js 4.22.0 WASM,"
  echo "XNNPACK, SIMD, one thread, after 2 warm-ups). GFLOP: the compiled convolutions and dots;"
  echo "GFLOP/s at jit=auto, 1 thread, and its share of one core's float32 FMA peak ($PEAK GFLOP/s,"
  echo "$PEAK_HOW)."
  echo
  echo "Compile: cold, into an empty disk cache (\`--cache-dir\`); warm: a second process loading"
  echo "it (lowering, HLO passes, key, load and link), and its share of cold."
  echo
  echo "ONNX Runtime: onnxruntime-node (shared/tools/ort, CPU EP, graph optimization 'all'),"
  echo "median of $REPEAT runs after 3 warm-ups; ORT / auto above 1 means tfjit is faster."
  echo
  echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), family" \
       "$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1);" \
       "ISA: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
              grep -xE 'avx2|fma|avx512f|avx512_vnni|avx512_bf16|amx_tile' | sort -u | tr '\n' ' ')"
  echo
  echo "| model | GFLOP | off 1T ms | auto 1T ms | off 2T ms | auto 2T ms | WASM ms | WASM / auto 1T | WASM / auto 2T | auto vs off 1T | GFLOP/s 1T | compile ms | warm start ms | ORT 1T ms | ORT 2T ms | ORT / auto 1T | ORT / auto 2T |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  cat "$rows"
  echo
  python3 - "$rows" <<'PY'
import statistics, sys
r1, r2 = [], []
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip('|').split('|')]
    if len(cells) >= 17:
        for col, out in ((15, r1), (16, r2)):
            if cells[col].endswith('x'):
                out.append(float(cells[col][:-1]))
for name, r in (('1 thread', r1), ('2 threads', r2)):
    if r:
        print(f"ORT / auto, {name}: {len(r)} models, median {statistics.median(r):.2f}, "
              f"min {min(r):.2f}, max {max(r):.2f}; tfjit faster on {sum(x > 1 for x in r)}.  ")
PY
} >"$REPORT"
echo "report written to $REPORT"
