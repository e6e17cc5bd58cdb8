#!/usr/bin/env bash
# The GPU device check (issue 7), in two halves:
#
#   scripts/gpu_check.sh build   here (no GPU needed): builds tfjit-gpu-check as one
#                                self-contained, stripped binary (LLVM, abseil, protobuf,
#                                libstdc++ linked statically; it needs glibc >= 2.36 and, for
#                                the GPU, NVIDIA's driver) into gpu-check/, with one real model
#                                (nsfwjs mobilenet_v2_mid, 4.4 MB) from the model cache. The
#                                folder is ignored by git; the device tool carries it.
#   scripts/gpu_check.sh run     there, from the repository root: the differential suite on
#                                GPU:0 against the evaluator, known issue A with real devices,
#                                fused elementwise bandwidth against a device-to-device copy,
#                                GEMM against cuBLAS called directly, and the model's latency
#                                on GPU:0 against CPU:0. Results go to $OUT/gpu_check.txt (the
#                                RESULT lines and the suite's summary) and $OUT/gpu_check.log.
#                                Each step has a time limit (150, 60, 60 s: 4.5 minutes at
#                                most, well under that expected on an H200).
#
# The device call: run(command="scripts/gpu_check.sh run", carry=["gpu-check"], timeout_s=330).
# cuBLAS: libcublas.so.13 on the loader path, else the newest one the machine's Python wheels
# hold (found with find), else $TFJIT_CUBLAS.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="$root/gpu-check"
mode="${1:-}"

if [ "$mode" = build ]; then
  set -e
  build="${TFJIT_GPU_CHECK_BUILD_DIR:-$root/build-gpucheck}"
  TFJIT_BUILD_DIR="$build" \
    TFJIT_CMAKE_ARGS="-DTFJIT_STATIC_BUNDLE=ON -DTFJIT_BUILD_BENCH=OFF -DTFJIT_GPU_CHECK_SOURCE_DIR=. -DTFJIT_CCACHE=OFF" \
    "$root/scripts/build.sh" --target tfjit-gpu-check
  rm -rf "$bundle"
  mkdir -p "$bundle/model"
  # xz: 49 MiB -> about 12, so the carried tree stays well under the device tool's 64 MiB.
  xz -T2 -6 -c "$build/bin/tfjit-gpu-check" >"$bundle/tfjit-gpu-check.xz"
  models="${TFJIT_MODEL_CACHE:-$HOME/.cache/tfjit/models}/models/nsfwjs/materialized/mobilenet_v2_mid"
  if [ ! -f "$models/model.json" ]; then
    "$root/tests/models/fetch_models.sh" "${TFJIT_MODEL_CACHE:-$HOME/.cache/tfjit/models}"
  fi
  cp "$models"/* "$bundle/model/"
  echo "gpu-check/: $(du -sh "$bundle" | cut -f1)"
  echo "needs: $(readelf -d "$build/bin/tfjit-gpu-check" | awk '/NEEDED/ {print $5}' | tr -d '[]' | tr '\n' ' ')"
  exit 0
fi

if [ "$mode" != run ]; then
  echo "usage: $0 build | run" >&2
  exit 2
fi

out="${OUT:-$root/gpu-check-out}"
mkdir -p "$out"
log="$out/gpu_check.log"
results="$out/gpu_check.txt"
: >"$log"
: >"$results"
exe="${TMPDIR:-/tmp}/tfjit-gpu-check"
if [ ! -f "$bundle/tfjit-gpu-check.xz" ] || ! xz -dc "$bundle/tfjit-gpu-check.xz" >"$exe"; then
  echo "no $bundle/tfjit-gpu-check.xz: run '$0 build' first and carry gpu-check" | tee -a "$results"
  exit 1
fi
chmod +x "$exe"
if [ -z "${TFJIT_CUBLAS:-}" ] && ! ldconfig -p 2>/dev/null | grep -q "libcublas.so.13 "; then
  found="$(find / -xdev -name 'libcublas.so.1[23]' 2>/dev/null | sort -V -t. -k3 | tail -1)"
  if [ -n "$found" ]; then
    export TFJIT_CUBLAS="$found"
    # cuBLAS needs cuBLASLt from the same folder.
    export LD_LIBRARY_PATH="$(dirname "$found")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
{
  echo "RESULT date $(date -u +%FT%TZ)"
  echo "RESULT gpu $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
  echo "RESULT cublas ${TFJIT_CUBLAS:-libcublas.so.13 from the loader path}"
  # The host CPU beside the GPU (its CPU:0 figures are a ratio's other side).
  isa=avx2
  grep -q avx512f /proc/cpuinfo && isa=avx512f
  grep -q avx2 /proc/cpuinfo || isa=sse
  echo "RESULT host_cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') cores=$(nproc) isa=$isa"
} >>"$results"
cd "$root" || exit 1
status=0
step() {  # step NAME LIMIT_S COMMAND...: runs it with a time limit (together 270 s: the issue
  local name="$1" limit="$2"  # allows 5 minutes of device time)
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  echo "RESULT step=$name rc=$rc seconds=$((SECONDS - start))" >>"$results"
  [ $rc -eq 0 ] || status=1
}
step differential 150 "$exe" test --gtest_filter='Gpu*:CudaDriver*:VariableGpu*' --gtest_brief=1
step bench 60 "$exe" bench
step model 60 "$exe" model gpu-check/model/model.json 20
grep -E "^RESULT|PASSED|FAILED|SKIPPED|Failure|error" "$log" | grep -v "^\[ RUN" >>"$results"
cat "$results"
exit $status
