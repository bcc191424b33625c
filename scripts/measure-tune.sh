#!/usr/bin/env bash
# Measures what `gpu-doctor-cli tune` itself costs while it watches trials: its own CPU time during
# each trial (the journal's tuner_cpu_secs, read from /proc/self/stat around the trial: the
# sampler's threads, the process-tree and log reads) against the trial's wall time. The budget
# (issue 36) is 1 % of the trial. The trials are the test workload (tests/tune_workload, shape
# "memory": seven trials) on the test-only fake NVML, each holding its memory HOLD_MS.
#
# Usage: scripts/measure-tune.sh [HOLD_MS] [BINARY]
#   HOLD_MS  how long each trial's workload runs, ms (default 10000)
#   BINARY   gpu-doctor-cli (default target/measure/gpu-doctor-cli, built with --profile measure)
# Needs: cc.
set -euo pipefail
hold=${1:-10000}
bin=${2:-target/measure/gpu-doctor-cli}
cd "$(dirname "$0")/.."
[ -x "$bin" ] || cargo build --profile measure --bin gpu-doctor-cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/vram"
cc -shared -fPIC -O2 -fvisibility=hidden -o "$work/libnvidia-ml.so.1" tests/fake_nvml/fake_nvml.c -lpthread
cc -O1 -o "$work/workload" tests/tune_workload/workload.c
printf 'gpus = 1\nvram_dir = %s\nvram_total_gib = 24\n' "$work/vram" >"$work/libnvidia-ml.so.1.scenario"
FAKE_NVML_SCENARIO="$work/libnvidia-ml.so.1.scenario" FAKE_VRAM_DIR="$work/vram" HOLD_MS=$hold \
    "$bin" tune --nvml-lib "$work/libnvidia-ml.so.1" --rate-pattern '([0-9.]+) it/s' \
    --journal "$work/tune.jsonl" -- "$work/workload" memory '{batch}' >"$work/out.txt" 2>"$work/err.txt"
python3 - "$work/tune.jsonl" <<'PY'
import json, sys
trials = [json.loads(l) for l in open(sys.argv[1]) if '"type":"trial"' in l]
for t in trials:
    print(f"trial {t['id']}: {t['secs']:.1f} s, tuner CPU {t['tuner_cpu_secs']*1000:.0f} ms ({100*t['tuner_cpu_secs']/t['secs']:.2f} %)")
own = sum(t['tuner_cpu_secs'] for t in trials); wall = sum(t['secs'] for t in trials)
worst = max(100 * t['tuner_cpu_secs'] / t['secs'] for t in trials)
print(f"tuner CPU over {len(trials)} trials: {own:.3f} s of {wall:.1f} s = {100*own/wall:.2f} % (worst trial {worst:.2f} %; budget 1 %)")
PY
