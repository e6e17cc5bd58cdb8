#!/usr/bin/env bash
# ./test.sh           installs what is missing, builds everything, runs every test (ctest)
# ./test.sh ARGS...   extra ctest arguments, e.g. ./test.sh -R hlo
# ./test.sh --asan    the same suite built with AddressSanitizer+LeakSanitizer+UBSan (build-asan/)
# ./test.sh --tsan    the same suite built with ThreadSanitizer (build-tsan/)
# ./test.sh --tsan-threads
#                     ThreadSanitizer on the suites that use threads only (session, executor,
#                     thread pool, compilation cache, disk cache, deadlines and cancellation,
#                     tfjit serve's REST server and batching queues, the Python module's
#                     released GIL): builds just their targets in
#                     build-tsan/ (what .ci/run runs)
# Sanitizer runs leave out the real-model conformance test (ctest label `models`): it takes
# minutes without instrumentation and its code paths are covered by the other tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sanitize=""
threads_only=""
case "${1:-}" in
  --asan) sanitize=address; shift ;;
  --tsan) sanitize=thread; shift ;;
  --tsan-threads) sanitize=thread; threads_only=1; shift ;;
esac
# The suites whose code runs on several threads at once (--tsan-threads).
thread_suites=(core_test concurrency_test session_test deadline_test object_cache_test
               hostile_input_test serving_test)
# And the Python module's threads sharing one model (the CLI is an environment value of it).
thread_python=(tfjit_python tfjit)
ctest_args=()
build_args=()
if [ -n "$sanitize" ]; then
  suffix=$([ "$sanitize" = address ] && echo asan || echo tsan)
  export TFJIT_BUILD_DIR="${TFJIT_BUILD_DIR:-$root/build-$suffix}"
  # -O1 with line tables: sanitizer reports name file:line, and the build stays affordable on
  # a 2-core CI machine. Benchmarks are not built.
  export TFJIT_CMAKE_ARGS="-DTFJIT_SANITIZE=$sanitize -DTFJIT_BUILD_BENCH=OFF \
-DCMAKE_CXX_FLAGS_RELEASE=-O1\ -g1 -DCMAKE_C_FLAGS_RELEASE=-O1\ -g1"
  # Any report fails the test that caused it; leaks are reported at exit (LeakSanitizer).
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
  if [ "$sanitize" = thread ]; then
    # Debian's gRPC and abseil are not built with ThreadSanitizer, which then reports races
    # inside them (gRPC's epoll descriptor, abseil's deadlock graph) that are not tfjit's: the
    # serving tests that start the gRPC server stay out of TSan runs. The REST server, the
    # batching queues, version polling and the fault tests run under it.
    export GTEST_FILTER="${GTEST_FILTER:--ServeTest.GrpcAnswersAsTfServing:ServeTest.ClassifyAndRegressAsTfServing:ServeTest.ModelConfigReloadsWithoutRestart}"
  fi
  ctest_args=(-LE models)
  if [ -n "$threads_only" ]; then
    build_args=(--target "${thread_suites[@]}" "${thread_python[@]}")
    ctest_args+=(-R "^(($(IFS='|'; echo "${thread_suites[*]}"))_shard|python_threads_test$)")
  fi
fi
# Phase times go to the last line of the output (CI logs show their tail), pass or fail.
phase="install+build"
started=$SECONDS
tests_started=""
report() {
  local rc=$? now=$SECONDS tests_s=0
  local build_s=$(( ${tests_started:-$now} - started ))
  [ -n "$tests_started" ] && tests_s=$(( now - tests_started ))
  local line="tfjit test.sh${sanitize:+ --${suffix}}${threads_only:+-threads}: exit $rc in $phase; install+build"
  line+=" ${build_s} s, tests ${tests_s} s, total $(( now - started )) s"
  echo "$line"
  # TFJIT_TIMES_FILE: also appended there (.ci/run prints both passes' lines at its end).
  if [ -n "${TFJIT_TIMES_FILE:-}" ]; then echo "$line" >> "$TFJIT_TIMES_FILE"; fi
}
trap report EXIT
"$root/scripts/build.sh" "${build_args[@]}"
cd "${TFJIT_BUILD_DIR:-$root/build}"
phase="tests"
tests_started=$SECONDS
ctest --output-on-failure -j "${TFJIT_JOBS:-$(nproc)}" "${ctest_args[@]}" "$@"
