#!/usr/bin/env bash
# scripts/fuzz.sh TARGET SECONDS [libFuzzer args...]
# Builds the libFuzzer target fuzz_TARGET in build-fuzz/ (clang-19, -DTFJIT_FUZZ=ON: ASan +
# UBSan + coverage everywhere) and fuzzes it for SECONDS, niced, on the work corpus
# build-fuzz/corpus/TARGET (seeded from tests/fuzz/corpus/TARGET and every regression input in
# tests/fuzz/regressions/TARGET). Crash inputs go to build-fuzz/crashes/TARGET/; copy each
# one into tests/fuzz/regressions/TARGET/ under a name saying what it exercises once fixed, and
# the replay test (ctest -R fuzz_replay) keeps it fixed.
# Targets: graphdef_binary graphdef_text tfjs_model saved_model npy hlo_text pipeline.
# Exit status: 0 when the run found nothing, 1 when it found a crash, leak, timeout or OOM.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
targets="graphdef_binary graphdef_text tfjs_model saved_model npy hlo_text pipeline"
if [ $# -lt 2 ] || ! [[ " $targets " == *" $1 "* ]] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer args...]; TARGET is one of: $targets" >&2
  exit 2
fi
target="$1"
seconds="$2"
shift 2
build="${TFJIT_FUZZ_BUILD_DIR:-$root/build-fuzz}"

# clang-19 and its runtime libraries (libFuzzer, ASan, UBSan) come from Debian.
if ! command -v clang++-19 >/dev/null || ! dpkg -s libclang-rt-19-dev >/dev/null 2>&1; then
  echo "fuzz.sh: installing clang-19 libclang-rt-19-dev" >&2
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  $sudo_cmd apt-get install -y -q clang-19 libclang-rt-19-dev >/dev/null
fi

# Configure once (ninja re-runs cmake itself when CMakeLists change). -O1 with line tables
# keeps reports readable and the whole-project build affordable; tests/CMakeLists.txt adds only
# the fuzz targets in this build, and only fuzz_TARGET is built. -fclang-abi-compat=17: Debian's
# abseil is built by GCC, and clang >= 18 mangles enable_if template parameters differently
# (absl::Cord's constructors would not link).
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTFJIT_FUZZ=ON -DTFJIT_BUILD_BENCH=OFF -DTFJIT_BUILD_TESTS=ON \
    -DCMAKE_CXX_FLAGS=-fclang-abi-compat=17 \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1" "-DCMAKE_C_FLAGS_RELEASE=-O1 -g1" >/dev/null
fi
# TFJIT_FUZZ_NO_BUILD=1: fuzz the binary as it is (e.g. while another build holds the lock).
if [ "${TFJIT_FUZZ_NO_BUILD:-0}" = 1 ] && [ -x "$build/bin/fuzz_$target" ]; then
  :
elif ! "$root/scripts/build_lock.sh" ninja -C "$build" "fuzz_$target" >"$build/fuzz_build_$target.log" 2>&1; then
  grep -E " error|FAILED|undefined reference" -A3 "$build/fuzz_build_$target.log" | head -40 >&2
  echo "fuzz.sh: building fuzz_$target failed (log: $build/fuzz_build_$target.log)" >&2
  exit 2
fi

corpus="$build/corpus/$target"
crashes="$build/crashes/$target"
mkdir -p "$corpus" "$crashes"
for dir in "$root/tests/fuzz/corpus/$target" "$root/tests/fuzz/regressions/$target"; do
  [ -d "$dir" ] && find "$dir" -type f -exec cp -n {} "$corpus/" \;
done
# The multi-file separator (tests/fuzz/fuzz_util.h) as a dictionary word helps mutations keep
# container inputs well formed.
dict="$build/corpus/$target.dict"
printf '"\\x0a#tfjit-fuzz-file#\\x0a"\n"model.json"\n"variables/variables.index"\n' > "$dict"
printf '"variables/variables.data-00000-of-00001"\n"saved_model.pb"\n' >> "$dict"

log="$build/fuzz_$target.log"
echo "fuzz.sh: fuzz_$target for ${seconds}s on $corpus ($(ls "$corpus" | wc -l) inputs); log $log"
status=0
# -print_final_stats prints stat::number_of_executed_units etc. at the end. ASan's leak check
# stays on; -timeout flags one input running over 10 s, the limits flag runaway memory.
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
  nice -n 10 "$build/bin/fuzz_$target" "$corpus" -dict="$dict" -max_total_time="$seconds" \
  -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$crashes/" "$@" >"$log" 2>&1 || status=$?
grep -E "^stat::|^#[0-9]+ +DONE" "$log" || tail -5 "$log"
execs=$(grep -Eo "stat::number_of_executed_units: [0-9]+" "$log" | grep -Eo "[0-9]+$" || true)
# -fork=N mode prints no stat:: lines; its last "#N:" status line counts the executions.
[ -n "$execs" ] || execs=$(grep -Eo "^#[0-9]+:" "$log" | tail -1 | tr -dc 0-9 || true)
execs=${execs:-0}
cov=$(grep -Eo "cov: [0-9]+" "$log" | tail -1 | grep -Eo "[0-9]+" || echo 0)
found=$(find "$crashes" -type f -newer "$dict" | wc -l)
echo "fuzz.sh: target=$target seconds=$seconds executions=$execs coverage=$cov corpus=$(ls "$corpus" | wc -l) findings=$found exit=$status"
if [ "$found" -gt 0 ] || [ "$status" -ne 0 ]; then
  grep -E "ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error|SUMMARY|invariant failed" "$log" | head -10
  find "$crashes" -type f -newer "$dict"
  exit 1
fi
