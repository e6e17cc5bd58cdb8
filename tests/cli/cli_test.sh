#!/usr/bin/env bash
# CLI behaviour: exit codes (0 ok, 1 error with "CODE: message" on stderr, 2 usage), printed
# summaries, output files, and agreement of --jit none/auto/all on the demo model.
set -u
# What a first compile prints (compile times, per-cluster lines) is checked here: no disk cache
# of compiled code, even when the user's environment names one.
unset TFJIT_CACHE_DIR
tfjit="$1"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
check() {  # check NAME EXPECTED_RC COMMAND... ; output in $tmp/out, $tmp/err
  local name="$1" want="$2"; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL $name: exit $rc, expected $want"; sed 's/^/  /' "$tmp/out" "$tmp/err" | head -20
    fails=$((fails+1)); return 1
  fi
  passes=$((passes+1)); return 0
}
expect_in() {  # expect_in NAME FILE PATTERN
  if ! grep -qE -- "$3" "$2"; then echo "FAIL $1: '$3' not in $2:"; sed 's/^/  /' "$2" | head; fails=$((fails+1)); else passes=$((passes+1)); fi
}

check usage 2 "$tfjit"
check bad-flag 2 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --bogus 1
check bad-jit 2 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --jit sometimes
check missing-file 1 "$tfjit" run "$tmp/none.pb"
expect_in missing-file-msg "$tmp/err" '^NOT_FOUND: '
printf 'not a graph \001\002' > "$tmp/bad.pb"
check malformed 1 "$tfjit" run "$tmp/bad.pb"
expect_in malformed-msg "$tmp/err" '^INVALID_ARGUMENT: .*bad.pb'
# --device gpu:0: without a CUDA driver or GPU, a FAILED_PRECONDITION saying which is missing.
if [ -z "${TFJIT_LIBCUDA:-}" ] && ! ldconfig -p 2>/dev/null | grep -q "libcuda.so.1 "; then
  check no-gpu 1 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --random-inputs 1 --device gpu:0
  expect_in no-gpu-msg "$tmp/err" '^FAILED_PRECONDITION: device .*GPU:0 does not exist: no CUDA driver: cannot load .libcuda.so.1.*use --device cpu:0'
else
  echo "skip no-gpu: this machine has a CUDA driver"
fi
# TF's environment switches: TF_XLA_FLAGS sets the jit mode, an explicit --jit wins; a
# malformed value is refused naming the variable; XLA_FLAGS dumps the passes.
TF_XLA_FLAGS=--tf_xla_auto_jit=0 check env-off 0 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --random-inputs 1
expect_in env-off-summary "$tmp/out" 'jit=off clusters=0'
TF_XLA_FLAGS=--tf_xla_auto_jit=0 check env-override 0 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --random-inputs 1 --jit auto
expect_in env-override-summary "$tmp/out" 'jit=auto clusters=[1-9]'
TF_XLA_FLAGS=--tf_xla_auto_jit=7 check env-bad 1 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --random-inputs 1
expect_in env-bad-msg "$tmp/err" '^INVALID_ARGUMENT: TF_XLA_FLAGS: --tf_xla_auto_jit takes'
mkdir -p "$tmp/xla_dump"
XLA_FLAGS="--xla_dump_to=$tmp/xla_dump" check xla-dump 0 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --random-inputs 1
if ls "$tmp/xla_dump" | grep -q '_fusion\.hlo$' && ls "$tmp/xla_dump" | grep -q '\.ll$'; then
  passes=$((passes+1))
else
  echo "FAIL xla-dump-files: $(ls "$tmp/xla_dump" | head)"; fails=$((fails+1))
fi
# tfjit serve: TF Serving's flags; a bad one is a usage error, no model a start-up error.
check serve-bad-flag 2 "$tfjit" serve --bogus=1
expect_in serve-bad-flag-msg "$tmp/err" 'tfjit serve: --bogus=1: unknown flag'
check serve-no-model 1 "$tfjit" serve --port=0 --rest_api_port=0
expect_in serve-no-model-msg "$tmp/err" 'Both server_options.model_base_path and server_options.model_config_file are empty!'
# --batch-buckets: batch 3 runs padded to bucket 4 (symbolic from the first launch), and the
# profile lists the bucket; a bucket below 2 is a usage error.
check buckets 0 "$tfjit" run "$src/tests/tf/graphs/dynamic_batch.pbtxt" --random-inputs 1 --shape x=3,4 --shapes symbolic --batch-buckets 4,8 --profile
expect_in buckets-profile "$tmp/out" 'executables: bucket 4 \(padded\)'
# explain --batch-sizes: batch 1 static, one symbolic executable for 3, 2, 5 and 8.
check explain-batches 0 "$tfjit" explain "$src/tests/tf/graphs/dynamic_batch.pbtxt" --batch-sizes 1,3,2,5,8
expect_in explain-batches-classes "$tmp/out" '^  cluster_0: 2 compiles; executables: static x1, symbolic \(batch >= 2\) x1$'
check bad-buckets 2 "$tfjit" run "$src/tests/tf/graphs/dynamic_batch.pbtxt" --batch-buckets 1,4
expect_in bad-buckets-msg "$tmp/err" 'batch-buckets takes batch sizes >= 2'
# run --profile: the last run's units, the kernels inside its clusters (a dot among them), and
# the split between compiled code and the rest.
check profile 0 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --random-inputs 1 --repeat 2 --profile
expect_in profile-header "$tmp/out" '^profile of the last run'
expect_in profile-cluster "$tmp/out" ' cluster +cluster_[0-9]'
expect_in profile-kernels "$tmp/out" '^  kernels of cluster_[0-9]+ \([0-9.]+ ms, [0-9]+ kernels'
expect_in profile-kernel-dot "$tmp/out" '^ +[0-9.]+ +[0-9.]+ +1 +[0-9.]+ +[0-9.]+ +[0-9.]+  [a-z_.0-9]+ +[a-z+-]*dot'
expect_in profile-split "$tmp/out" 'compiled clusters .* ms \([0-9.]+%\), kernels .* outside compiled code'
# explain --format dot|svg: the clusters as coloured boxes, left-out nodes with their reason.
cat > "$tmp/left.pbtxt" <<'PBTXT'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 4 } } } } }
node { name: "e" op: "Exp" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "check" op: "CheckNumerics" input: "e" attr { key: "T" value { type: DT_FLOAT } } attr { key: "message" value { s: "bad" } } }
node { name: "n" op: "Neg" input: "check" attr { key: "T" value { type: DT_FLOAT } } }
PBTXT
check explain-dot 0 "$tfjit" explain "$tmp/left.pbtxt" --fetch n --format dot
expect_in explain-dot-cluster "$tmp/out" 'subgraph cluster_0 \{'
expect_in explain-dot-reason "$tmp/out" 'label="CheckNumerics\\ncheck\\n\(CheckNumerics stays in the runtime'
expect_in explain-dot-edge "$tmp/out" '^  n[0-9]+ -> n[0-9]+;'
if command -v dot >/dev/null; then
  check explain-svg 0 "$tfjit" explain "$tmp/left.pbtxt" --fetch n --format svg --output "$tmp/left.svg"
  expect_in explain-svg-file "$tmp/left.svg" '<svg '
  expect_in explain-svg-text "$tmp/left.svg" 'CheckNumerics'
else
  echo "skip explain-svg: Graphviz's dot is not installed"
fi
check explain-bad-format 2 "$tfjit" explain "$tmp/left.pbtxt" --format png
check unfed 1 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --fetch mm/plain
expect_in unfed-msg "$tmp/err" 'You must feed a value for placeholder tensor'

demo="$src/examples/models/demo_mlp.pbtxt"
for mode in none auto all; do
  if [ "$mode" = all ]; then want=1; else want=0; fi
  check "demo-$mode" "$want" "$tfjit" run "$demo" --random-inputs 3 --jit "$mode" --output-dir "$tmp/out_$mode"
  if [ "$mode" = all ]; then
    expect_in demo-all-msg "$tmp/err" 'Detected unsupported operations when trying to compile graph .*CheckNumerics'
  else
    expect_in "demo-$mode-summary" "$tmp/out" '^summary: jit='"$mode"' clusters=[0-9]+ nodes_compiled=[0-9]+/[0-9]+ compile_ms=[0-9.]+ run_ms=[0-9.]+'
    expect_in "demo-$mode-manifest" "$tmp/out_$mode/manifest.json" '"name": "output", "dtype": "float32", "shape": \[1, 10\], "file": "output.npy"'
    [ "$mode" = auto ] && expect_in demo-auto-clusters "$tmp/out" 'clusters=2 '
    [ "$mode" = auto ] && expect_in demo-auto-per-cluster "$tmp/out" ' cluster_compile_ms=cluster_[0-9]+:[0-9.]+,cluster_[0-9]+:[0-9.]+$'
  fi
done
# Same inputs (seed 3): the printed first values agree to 6 digits and the checksums within
# 1e-5 relative between none and auto (float32 results may differ in the last bits).
"$tfjit" run "$demo" --random-inputs 3 --jit none | grep -v '^summary' > "$tmp/none.txt"
"$tfjit" run "$demo" --random-inputs 3 --jit auto | grep -v '^summary' > "$tmp/auto.txt"
if paste -d'\n' "$tmp/none.txt" "$tmp/auto.txt" | awk '
    NR % 2 == 1 { a = $0; next }
    { b = $0; sa = a; sb = b; sub(/ sum=.*/, "", sa); sub(/ sum=.*/, "", sb);
      if (sa != sb) exit 1;
      x = a; y = b; sub(/.* sum=/, "", x); sub(/.* sum=/, "", y);
      d = x - y; if (d < 0) d = -d; m = (x < 0 ? -x : x); if (m < 1) m = 1;
      if (d > 1e-5 * m) exit 1 }'; then
  passes=$((passes+1))
else
  echo "FAIL none-vs-auto:"; diff "$tmp/none.txt" "$tmp/auto.txt" | head; fails=$((fails+1))
fi
# Feeding an output back: float32 .npy into an int32 placeholder is a dtype error.
check wrong-dtype 1 "$tfjit" run "$src/tests/tf/graphs/int_ops.pbtxt" --input i="$tmp/out_none/output.npy" --random-inputs 1
expect_in wrong-dtype-msg "$tmp/err" "^INVALID_ARGUMENT: feed 'i': expected dtype int32"
check explain 0 "$tfjit" explain "$demo"
expect_in explain-msg "$tmp/out" "'dense/check' \(CheckNumerics\): CheckNumerics stays in the runtime"
# With inputs, explain also compiles and prints each cluster's compile time.
check explain-compile 0 "$tfjit" explain "$demo" --random-inputs 1
expect_in explain-compile-msg "$tmp/out" '^compiled cluster_[0-9]+ \([0-9]+ nodes\) in [0-9.]+ ms: lowering [0-9.]+ ms, HLO passes [0-9.]+ ms, codegen [0-9.]+ ms, [0-9]+ kernels$'
# tf.function(jit_compile=True): --jit off still compiles the must-compile function body;
# CheckNumerics inside one fails with TF's message.
fns="$src/tests/tf/functions"
check fn-off 0 "$tfjit" run "$fns/jit_function.pbtxt" --random-inputs 1 --jit off --fetch post
expect_in fn-off-summary "$tmp/out" '^summary: jit=off clusters=1 nodes_compiled=7/11 '
check fn-check-numerics 1 "$tfjit" run "$fns/check_numerics.pbtxt" --random-inputs 1 --jit off
expect_in fn-check-numerics-msg "$tmp/err" '^INVALID_ARGUMENT: Detected unsupported operations when trying to compile graph __inference_f_12 on .*CheckNumerics'
check fn-explain 0 "$tfjit" explain "$fns/jit_function.pbtxt" --fetch post
expect_in fn-explain-msg "$tmp/out" "function call runs as a unit \(must-compile: yes\)"
# SavedModel directories: --signature picks the signature whose keys name feeds and fetches;
# the counter's checkpoint value is 0, so incr_counter's first run returns 1.
counter="$src/tests/data/savedmodels/saved_model_counter/00000123"
check sm-incr 0 "$tfjit" run "$counter" --signature incr_counter
expect_in sm-incr-out "$tmp/out" '^output float32\[\] \[1\]'
check sm-get 0 "$tfjit" run "$counter" --signature get_counter --jit none
expect_in sm-get-out "$tmp/out" '^output float32\[\] \[0\]'
check sm-bad-signature 1 "$tfjit" run "$counter" --signature nope
expect_in sm-bad-signature-msg "$tmp/err" "^NOT_FOUND: .*no signature 'nope'.*'incr_counter_by'"
check sm-bad-tags 1 "$tfjit" run "$counter" --tags serve,gpu
expect_in sm-bad-tags-msg "$tmp/err" '^NOT_FOUND: .*no MetaGraphDef has the tags \[serve, gpu\]; its tag sets are \[serve\]'

# Limits: an endless While (cond is a constant true) stops at --timeout with DEADLINE_EXCEEDED
# and exit 1, in the runtime and compiled; bad limit values are usage errors.
cat > "$tmp/forever.pbtxt" <<'PB'
node { name: "x0" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } } }
node { name: "while" op: "StatelessWhile" input: "x0" attr { key: "T" value { list { type: DT_FLOAT } } }
       attr { key: "body" value { func { name: "body" } } } attr { key: "cond" value { func { name: "cond" } } } }
node { name: "out" op: "Identity" input: "while" attr { key: "T" value { type: DT_FLOAT } } }
library {
  function { signature { name: "cond" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "c" type: DT_BOOL } }
    node_def { name: "t" op: "Const" attr { key: "dtype" value { type: DT_BOOL } } attr { key: "value" value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }
    ret { key: "c" value: "t:output:0" } }
  function { signature { name: "body" input_arg { name: "x" type: DT_FLOAT } output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
    node_def { name: "add" op: "AddV2" input: "x" input: "one:output:0" attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "y" value: "add:z:0" } }
}
versions { producer: 1645 min_consumer: 12 }
PB
for mode in none auto; do
  start=$(date +%s)
  check "timeout-$mode" 1 timeout 60 "$tfjit" run "$tmp/forever.pbtxt" --random-inputs 1 --jit "$mode" --timeout 1
  expect_in "timeout-$mode-msg" "$tmp/err" '^DEADLINE_EXCEEDED: .*limit 1000 ms'
  if [ $(( $(date +%s) - start )) -gt 20 ]; then
    echo "FAIL timeout-$mode-bounded: took $(( $(date +%s) - start )) s"; fails=$((fails+1))
  fi
done
# The deadline counts compile time: a cluster whose compile takes longer than --timeout (1 ms;
# LLVM's code generation alone takes longer) ends DEADLINE_EXCEEDED at a compile stage.
for mode in auto all; do
  check "timeout-compile-$mode" 1 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --random-inputs 1 \
    --jit "$mode" --timeout 0.001
  expect_in "timeout-compile-$mode-msg" "$tmp/err" '^DEADLINE_EXCEEDED: .*limit 1 ms'
done
check timeout-bad 2 "$tfjit" run "$tmp/forever.pbtxt" --timeout -1
check memory-limit-bad 2 "$tfjit" run "$tmp/forever.pbtxt" --memory-limit lots
check memory-limit-exceeded 1 "$tfjit" run "$src/tests/tf/graphs/matmul.pbtxt" --random-inputs 1 --memory-limit 1
expect_in memory-limit-msg "$tmp/err" '^RESOURCE_EXHAUSTED: .*memory limit 1 bytes'

# bench: --jit off vs auto in one process, with the lines docs/PERFORMANCE.md reads.
check bench 0 "$tfjit" bench "$demo" --threads 1 --repeat 3
expect_in bench-off "$tmp/out" '^jit=off +median +[0-9.]+ ms +min +[0-9.]+ ms'
expect_in bench-auto "$tmp/out" '^jit=auto +median +[0-9.]+ ms .* compile [0-9.]+ ms +clusters 2 '
expect_in bench-ratio "$tmp/out" '^auto vs off: [0-9.]+x'
expect_in bench-flops "$tmp/out" 'compiled convolutions and dots: [0-9.]+ GFLOP per run'
# --cache-dir: the second process loads both clusters from the disk cache.
check bench-cache-cold 0 "$tfjit" bench "$demo" --threads 1 --repeat 1 --cache-dir "$tmp/objcache"
expect_in bench-cache-cold-msg "$tmp/out" 'compile [0-9.]+ ms +clusters 2 '
check bench-cache-warm 0 "$tfjit" bench "$demo" --threads 1 --repeat 1 --cache-dir "$tmp/objcache"
expect_in bench-cache-warm-msg "$tmp/out" 'compile [0-9.]+ ms \(2 from the disk cache\) +clusters 2 '
# Two processes, one cache folder: both compile the demo model at once and both succeed with
# the same outputs; each entry is published once (the slower finds it there), none is left
# half-written, and a third process loads both clusters from the folder.
two="$tmp/cache_two"
for p in a b; do
  ( "$tfjit" run "$demo" --random-inputs 2 --jit auto --cache-dir "$two" --output-dir "$tmp/two_$p" \
      >"$tmp/two_$p.out" 2>"$tmp/two_$p.err"; echo $? >"$tmp/two_$p.rc" ) &
done
wait
if [ "$(cat "$tmp/two_a.rc") $(cat "$tmp/two_b.rc")" = "0 0" ] && diff -rq "$tmp/two_a" "$tmp/two_b" >/dev/null &&
   [ -n "$(ls "$tmp/two_a"/*.npy 2>/dev/null)" ] &&
   [ -z "$(ls "$two" | grep -v '\.tfjit-obj$')" ]; then
  passes=$((passes+1))
else
  echo "FAIL two-processes-one-cache: rc $(cat "$tmp/two_a.rc") / $(cat "$tmp/two_b.rc"), files: $(ls "$two" | tr '\n' ' ')"
  sed 's/^/  /' "$tmp/two_a.err" "$tmp/two_b.err" | head; fails=$((fails+1))
fi
check two-processes-third 0 "$tfjit" bench "$demo" --threads 1 --repeat 1 --cache-dir "$two"
expect_in two-processes-third-msg "$tmp/out" 'compile [0-9.]+ ms \(2 from the disk cache\) +clusters 2 '
check shape-flag 0 "$tfjit" run "$demo" --random-inputs 1 --shape input=3,256
expect_in shape-flag-out "$tmp/out" '^output float32\[3,10\]'
check shape-bad 2 "$tfjit" run "$demo" --random-inputs 1 --shape input=3,x
check shape-wrong-rank 1 "$tfjit" run "$demo" --random-inputs 1 --shape input=3
expect_in shape-wrong-rank-msg "$tmp/err" '^INVALID_ARGUMENT: '
check threads-bad 2 "$tfjit" run "$demo" --threads -2
check threads-two 0 "$tfjit" run "$demo" --random-inputs 1 --threads 2
# A TF.js model whose signature spells a key "x:0": --input x=... feeds it, and
# --random-inputs must not feed it a second, random value. out = x + y = [11, 22].
cat > "$tmp/model.json" <<'JSON'
{"format": "graph-model", "modelTopology": {"node": [
  {"name": "x", "op": "Placeholder", "attr": {"dtype": {"type": "DT_FLOAT"}, "shape": {"shape": {"dim": [{"size": "2"}]}}}},
  {"name": "y", "op": "Placeholder", "attr": {"dtype": {"type": "DT_FLOAT"}, "shape": {"shape": {"dim": [{"size": "2"}]}}}},
  {"name": "out", "op": "AddV2", "input": ["x", "y"], "attr": {"T": {"type": "DT_FLOAT"}}}],
  "versions": {"producer": 1}},
 "signature": {"inputs": {"x:0": {"name": "x:0", "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "2"}]}},
                          "y": {"name": "y:0", "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "2"}]}}},
               "outputs": {"out": {"name": "out:0", "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "2"}]}}}},
 "weightsManifest": [{"paths": [], "weights": []}]}
JSON
python3 - "$tmp" <<'PY'
import struct, sys
for name, values in (("x", (1.0, 2.0)), ("y", (10.0, 20.0))):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
    header += " " * ((64 - (len(header) + 11) % 64) % 64) + "\n"
    with open(f"{sys.argv[1]}/{name}.npy", "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<2f", *values))
PY
check colon-zero-key 0 "$tfjit" run "$tmp/model.json" --input x="$tmp/x.npy" --input y="$tmp/y.npy" --random-inputs 5
expect_in colon-zero-key-out "$tmp/out" '^out float32\[2\] \[11, 22\]'

# Usage, --help and --version; a flag where the model belongs is usage (exit 2), not NOT_FOUND.
check run-help 0 "$tfjit" run --help
expect_in run-help-usage "$tmp/out" '^  tfjit run MODEL'
check run-typo 2 "$tfjit" run --some-typo
expect_in run-typo-msg "$tmp/err" "expected a model path after 'run', got the flag '--some-typo'"
check version 0 "$tfjit" --version
expect_in version-text "$tmp/out" '^tfjit [0-9]+\.[0-9]+\.[0-9]+ \(LLVM [0-9]+\.'
# tfjit ops: the table (a kernel-and-lowering op, a kernel-only op), one op, an unknown op.
check ops 0 "$tfjit" ops
expect_in ops-header "$tmp/out" '^op +family +kernel +cpu +gpu +dtypes'
expect_in ops-relu "$tmp/out" '^Relu +nn +yes +yes +yes '
expect_in ops-unique "$tmp/out" '^Unique +array +yes +- +- '
expect_in ops-summary "$tmp/out" '^[0-9]+ ops: [0-9]+ with a fallback kernel, [0-9]+ compile'
check ops-one 0 "$tfjit" ops Sum
expect_in ops-one-const "$tmp/out" '^  compile-time constant inputs: reduction_indices$'
expect_in ops-one-attr "$tmp/out" '^  attr: +keep_dims = false \(default\)'
check ops-unknown 1 "$tfjit" ops Reluu
expect_in ops-unknown-msg "$tmp/err" "^NOT_FOUND: tfjit does not know the op 'Reluu' \(did you mean Relu"
# Fetching X:1 and a node named X_1 writes two files; bfloat16 is written as float32 (read
# back with Debian's NumPy, which deps.sh installs).
cat > "$tmp/collide.pbtxt" <<'PBTXT'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 4 } } } } }
node { name: "X" op: "Unpack" input: "x" attr { key: "T" value { type: DT_FLOAT } } attr { key: "num" value { i: 4 } } }
node { name: "X_1" op: "Neg" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "b" op: "Cast" input: "x" attr { key: "SrcT" value { type: DT_FLOAT } } attr { key: "DstT" value { type: DT_BFLOAT16 } } }
PBTXT
check collide 0 "$tfjit" run "$tmp/collide.pbtxt" --random-inputs 2 --fetch X:1 --fetch X_1 --fetch b --output-dir "$tmp/collide"
expect_in collide-first "$tmp/collide/manifest.json" '"name": "X:1", "dtype": "float32", "shape": \[\], "file": "X_1.npy"'
expect_in collide-second "$tmp/collide/manifest.json" '"name": "X_1", "dtype": "float32", "shape": \[4\], "file": "X_1.2.npy"'
expect_in collide-bf16 "$tmp/collide/manifest.json" '"name": "b", "dtype": "bfloat16", "stored_as": "float32", "shape": \[4\], "file": "b.npy"'
if /usr/bin/python3 - "$tmp/collide" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
x1, neg, b = np.load(f"{d}/X_1.npy"), np.load(f"{d}/X_1.2.npy"), np.load(f"{d}/b.npy")
assert x1.shape == () and neg.shape == (4,) and b.dtype == np.float32, (x1, neg, b)
assert x1 == -neg[1], (x1, neg)                      # X:1 is x[1], X_1 is -x
assert np.all(np.abs(b + neg) <= np.abs(neg) / 128)  # bfloat16 keeps 8 bits
PY
then passes=$((passes+1)); else echo "FAIL collide-values"; fails=$((fails+1)); fi

# A TF-written assertion: its message is a string constant; it passes, or fails with TF's text
# (--jit none and auto; the Assert stays in the runtime).
cat > "$tmp/assert.pbtxt" <<'PBTXT'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "msg" op: "Const" attr { key: "dtype" value { type: DT_STRING } } attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "x must be above the bound" } } } }
node { name: "bound" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } } }
node { name: "gt" op: "Greater" input: "x" input: "bound" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "axes" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 0 } } } }
node { name: "all" op: "All" input: "gt" input: "axes" }
node { name: "assert" op: "Assert" input: "all" input: "msg" input: "x" attr { key: "T" value { list { type: DT_STRING type: DT_FLOAT } } } attr { key: "summarize" value { i: 3 } } }
node { name: "y" op: "Identity" input: "x" input: "^assert" attr { key: "T" value { type: DT_FLOAT } } }
PBTXT
/usr/bin/python3 - "$tmp" <<'PY'
import sys
import numpy as np
np.save(f"{sys.argv[1]}/x2.npy", np.array([1.5, 2.5], dtype=np.float32))
np.save(f"{sys.argv[1]}/lo.npy", np.array(1.0, dtype=np.float32))
np.save(f"{sys.argv[1]}/hi.npy", np.array(2.0, dtype=np.float32))
PY
for mode in none auto; do
  check "assert-holds-$mode" 0 "$tfjit" run "$tmp/assert.pbtxt" --input x="$tmp/x2.npy" --input bound="$tmp/lo.npy" --fetch y --jit "$mode"
  check "assert-fails-$mode" 1 "$tfjit" run "$tmp/assert.pbtxt" --input x="$tmp/x2.npy" --input bound="$tmp/hi.npy" --fetch y --jit "$mode"
  expect_in "assert-msg-$mode" "$tmp/err" "^INVALID_ARGUMENT: node 'assert' \(Assert\): assertion failed: \[x must be above the bound\] \[1.5 2.5\]"
done

# tfjit train: TF-written training graphs (shared/data/training) fed y = 0.1 x + 0.3, the same
# batch every step (--input) or one of 5 per step (--batches); the loss printed every K steps
# falls to ~0 (GradientDescent(0.5) on an exact linear fit), in both jit modes.
training="$src/../shared/data/training"
/usr/bin/python3 - "$tmp" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(7)
x = rng.random(100, dtype=np.float32)
np.save(f"{sys.argv[1]}/tx.npy", x)
np.save(f"{sys.argv[1]}/ty.npy", (0.1 * x + 0.3).astype(np.float32))
np.save(f"{sys.argv[1]}/bx.npy", x.reshape(5, 20))
np.save(f"{sys.argv[1]}/by.npy", (0.1 * x + 0.3).astype(np.float32).reshape(5, 20))
PY
for mode in none auto; do
  check "train-tf1-$mode" 0 "$tfjit" train "$training/tf1_regression/model.pb" --steps 200 --every 50 \
    --init init --target train --fetch Mean --input x="$tmp/tx.npy" --input y="$tmp/ty.npy" --jit "$mode"
  expect_in "train-tf1-line-$mode" "$tmp/out" '^step 50/200  Mean [0-9.e+-]+  [0-9.]+ steps/s  [0-9]+ examples/s$'
  expect_in "train-tf1-converged-$mode" "$tmp/out" '^step 200/200  Mean [0-9.]+e-(0[6-9]|[1-9][0-9])'
  expect_in "train-tf1-summary-$mode" "$tmp/out" "^trained 200 steps in .* jit=$mode"
  check "train-tf2-batches-$mode" 0 "$tfjit" train "$training/tf2_regression_savedmodel" --steps 300 \
    --signature train --batches x="$tmp/bx.npy" --batches y="$tmp/by.npy" --jit "$mode"
  expect_in "train-tf2-converged-$mode" "$tmp/out" '^step 300/300  loss [0-9.]+e-(0[6-9]|[1-9][0-9])'
  expect_in "train-tf2-examples-$mode" "$tmp/out" ' steps/s  [0-9]+ examples/s$'
done
# --autofix compiles the TF1 step's reference-variable updates: the whole step is one cluster,
# in --jit all too (which fails without it, as TF's XLA does).
check train-tf1-all-autofix 0 "$tfjit" train "$training/tf1_regression/model.pb" --steps 200 \
  --every 100 --init init --target train --fetch Mean --input x="$tmp/tx.npy" \
  --input y="$tmp/ty.npy" --jit all --autofix
expect_in train-tf1-all-autofix-converged "$tmp/out" '^step 200/200  Mean [0-9.]+e-(0[6-9]|[1-9][0-9])'
expect_in train-tf1-all-autofix-one-cluster "$tmp/out" 'jit=all clusters=1 nodes_compiled=78/81'
check train-tf1-all-refused 1 "$tfjit" train "$training/tf1_regression/model.pb" --steps 1 \
  --init init --target train --fetch Mean --input x="$tmp/tx.npy" --input y="$tmp/ty.npy" --jit all
expect_in train-tf1-all-refused-msg "$tmp/err" 'Detected unsupported operations'
# --save writes the trained variables back: the copied SavedModel then holds w ~ 0.1.
mkdir -p "$tmp/trained/variables"
cp "$training/tf2_regression_savedmodel/saved_model.pb" "$tmp/trained/"
check train-save 0 "$tfjit" train "$training/tf2_regression_savedmodel" --steps 300 \
  --signature train --input x="$tmp/tx.npy" --input y="$tmp/ty.npy" --save "$tmp/trained/variables/variables"
expect_in train-save-msg "$tmp/out" '^saved the variables to .*trained/variables/variables.index'
check train-saved-w 0 "$tfjit" run "$tmp/trained" --signature w
expect_in train-saved-w-value "$tmp/out" '^output float32\[1\] .* sum=0\.(09[5-9]|10[0-4])'
check train-needs-steps 2 "$tfjit" train "$training/tf1_regression/model.pb" --target train
check train-bad-batches 1 "$tfjit" train "$training/tf2_regression_savedmodel" --steps 2 \
  --signature train --batches x="$tmp/tx.npy" --input y="$tmp/ty.npy"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
