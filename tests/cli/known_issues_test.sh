#!/usr/bin/env bash
# The six known issues through the CLI, as a user meets them: without --autofix the run exits
# 1 and stderr starts with TF's code and first line; with --autofix (where a fix exists) it
# exits 0 and prints the same outputs as --jit none.
set -u
tfjit="$1"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
fails=0; passes=0
fail() { echo "FAIL $1"; sed 's/^/  /' "$tmp/out" "$tmp/err" | head -20; fails=$((fails+1)); }
# rule NAME FIRST_LINE MODEL ARGS... : exit 1, stderr's first line starts with FIRST_LINE.
rule() {
  local name="$1" first="$2" model="$3"; shift 3
  "$tfjit" run "$model" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" -ne 1 ]; then fail "$name: exit $rc, expected 1"; return; fi
  if [ "$(head -c ${#first} "$tmp/err")" != "$first" ]; then
    fail "$name: stderr does not start with: $first"; return
  fi
  passes=$((passes+1))
}
# fixed NAME MODEL ARGS... : in every compiling jit mode, --autofix exits 0 and prints what the
# uncompiled run (--jit none) prints.
fixed() {
  local name="$1" model="$2"; shift 2
  "$tfjit" run "$model" "$@" --jit none 2>"$tmp/err" | grep -v '^summary' >"$tmp/ref"
  local mode
  for mode in off auto all; do
    "$tfjit" run "$model" "$@" --jit "$mode" --autofix >"$tmp/out" 2>"$tmp/err"; local rc=$?
    if [ "$rc" -ne 0 ]; then fail "$name-$mode: --autofix exit $rc, expected 0"; continue; fi
    if ! diff <(grep -v '^summary' "$tmp/out") "$tmp/ref" >/dev/null; then
      fail "$name-$mode: --autofix output differs from --jit none"
      diff <(grep -v '^summary' "$tmp/out") "$tmp/ref" | head; continue
    fi
    passes=$((passes+1))
  done
}

vars="$src/tests/tf/variables"
# A: a variable on CPU:0 used by a jit function placed on CPU:1.
for mode in off auto all; do
  rule "A-$mode" "INVALID_ARGUMENT: Trying to access resource Variable located in device /job:localhost/replica:0/task:0/device:CPU:0 from device /job:localhost/replica:0/task:0/device:CPU:1" \
    "$vars/wrong_device.pbtxt" --logical-cpus 2 --init Variable/Assign --random-inputs 1 --fetch read --jit "$mode"
done
grep -q '{{node AssignAddVariableOp}}\|AssignAddVariableOp' "$tmp/err" && passes=$((passes+1)) || fail "A names the node"
fixed A-autofix "$vars/wrong_device.pbtxt" --logical-cpus 2 --init Variable/Assign --random-inputs 1 --fetch read --repeat 2
# F: a shape read from a variable written earlier in the jit function.
rule F-variable "INVALID_ARGUMENT: Input 1 to node \`Reshape\` with op Reshape must be a compile-time constant." \
  "$vars/constant_from_variable.pbtxt" --init init --random-inputs 1 --fetch g_call

# B, C, D and F in a loop: jit functions as TF 2.x writes them (tests/tf/known_issues/).
ki="$src/tests/tf/known_issues"
for mode in off all; do
  rule "B-$mode" "UNIMPLEMENTED: Support for TensorList crossing the XLA/TF boundary is not implemented" \
    "$ki/list_crossing.pbtxt" --random-inputs 2 --jit "$mode"
  rule "C-$mode" "INVALID_ARGUMENT: XLA compilation requires a fixed tensor list size. Set the max number of elements. This could also happen if you're using a TensorArray in a while loop that does not have its maximum_iteration set, you can fix this by setting maximum_iteration to a suitable value." \
    "$ki/unbounded_list.pbtxt" --random-inputs 2 --jit "$mode"
  rule "D-$mode" "UNIMPLEMENTED: TensorArrays with dynamic size are not supported by XLA." \
    "$ki/dynamic_array.pbtxt" --random-inputs 2 --jit "$mode"
  rule "F-loop-$mode" "INVALID_ARGUMENT: Input 0 to node \`ones\` with op Fill must be a compile-time constant." \
    "$ki/loop_shape.pbtxt" --random-inputs 2 --jit "$mode"
done
rule "C-straight-line" "INVALID_ARGUMENT: XLA compilation requires a fixed tensor list size. Set the max number of elements." \
  "$ki/empty_list_no_max.pbtxt" --random-inputs 2 --jit off
rule "D-unshaped" "UNIMPLEMENTED: TensorArrays with dynamic size are not supported by XLA." \
  "$ki/dynamic_array_unshaped.pbtxt" --random-inputs 2 --jit off
# No provable single bound (two chains of pushes): --autofix leaves TF's error.
rule "C-two-chains-autofix" "INVALID_ARGUMENT: XLA compilation requires a fixed tensor list size. Set the max number of elements." \
  "$ki/two_push_chains.pbtxt" --random-inputs 2 --jit off --autofix
for g in list_crossing unbounded_list dynamic_array dynamic_array_unshaped empty_list_no_max loop_shape; do
  fixed "autofix-$g" "$ki/$g.pbtxt" --random-inputs 2
done

# E: stateful random ops in a jit function: TF's warning and exit 0 without --autofix; with it
# the compiled ops continue the kernels' seeded streams (the third run equals --jit none's).
if "$tfjit" run "$ki/stateful_random.pbtxt" --random-inputs 2 >"$tmp/out" 2>"$tmp/err" &&
   grep -q "Warning: Using tf.random.uniform with XLA compilation will ignore seeds; consider using tf.random.stateless_uniform instead if reproducible behavior is desired. random_uniform/RandomUniform" "$tmp/err"; then
  passes=$((passes+1))
else
  fail "E: no TF warning for a compiled stateful random op"
fi
fixed E-autofix "$ki/stateful_random.pbtxt" --random-inputs 2 --repeat 3

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
