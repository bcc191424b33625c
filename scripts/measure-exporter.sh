#!/usr/bin/env bash
# Measures `gpu-doctor-cli serve` as Prometheus sees it: scrape latency (curl's total time) at one
# scrape per second, and the exporter's CPU (% of one core) and resident memory over the window,
# with the test-only fake NVML playing eight GPUs (tests/fake_nvml, built here with cc).
#
# Usage: scripts/measure-exporter.sh [SECONDS] [BINARY]
#   SECONDS  measurement window (default 60)
#   BINARY   gpu-doctor-cli (default target/measure/gpu-doctor-cli, built with --profile measure)
# Needs: cc, curl.
set -euo pipefail
secs=${1:-60}
bin=${2:-target/measure/gpu-doctor-cli}
cd "$(dirname "$0")/.."
[ -x "$bin" ] || cargo build --profile measure --bin gpu-doctor-cli
command -v curl >/dev/null || { echo "curl not installed"; exit 1; }

work=$(mktemp -d)
trap 'kill ${srv:-} 2>/dev/null || true; rm -rf "$work"' EXIT
cc -shared -fPIC -O2 -fvisibility=hidden -o "$work/libnvidia-ml.so.1" tests/fake_nvml/fake_nvml.c -lpthread
port=$((20000 + RANDOM % 20000))
LD_LIBRARY_PATH=$work FAKE_NVML_SCENARIO=tests/fake_nvml/scenarios/eight-gpus.scenario \
    "$bin" serve --listen "127.0.0.1:$port" --interval 1 2>"$work/serve.log" &
srv=$!
sleep 10  # the first checklist run and a few samples
curl -fs "http://127.0.0.1:$port/metrics" >"$work/first.txt"
echo "exposition: $(wc -c <"$work/first.txt") bytes, $(grep -vc '^#' "$work/first.txt") series, $(grep -c '^DCGM_FI_DEV_GPU_UTIL{' "$work/first.txt") GPUs"

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
a=$(cpu_ticks "$srv")
for _ in $(seq "$secs"); do
    curl -fs -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/metrics" >>"$work/lat.txt"
    sleep 1
done
b=$(cpu_ticks "$srv")
awk -v a="$a" -v b="$b" -v hz="$hz" -v s="$secs" 'BEGIN { printf "exporter CPU: %.2f %% of one core over %d s at 1 scrape/s (sampling every 1 s, 8 GPUs)\n", 100 * (b - a) / hz / s, s }'
awk '/VmRSS/ { rss = $2 } /VmHWM/ { hwm = $2 } END { printf "exporter memory: RSS %.1f MiB (peak %.1f MiB)\n", rss / 1024, hwm / 1024 }' "/proc/$srv/status"
sort -n "$work/lat.txt" | awk '{ v[NR] = $1 * 1000 } END { printf "scrape latency: median %.2f ms, p95 %.2f ms, max %.2f ms (%d scrapes)\n", v[int(NR / 2) + 1], v[int(NR * 0.95)], v[NR], NR }'
