#!/usr/bin/env bash
# Runs every GPU-side check of gpu-doctor on a machine with a real NVIDIA GPU, in one go, and
# compares what gpu-doctor reads through NVML with what nvidia-smi says. It is the first thing to
# run on a machine with a GPU (it needs no network).
#
# Usage: scripts/on-gpu.sh [BIN_DIR]
#   BIN_DIR  a folder holding gpu-doctor-cli (and optionally gpu-doctor) built elsewhere; without
#            it the release binaries are built here with cargo.
# Environment:
#   ON_GPU_OUT  folder for every output (default: a new temporary folder); it ends up holding
#               summary.txt, one file per step, and the capture.
#   ON_GPU_BURN seconds of the smoke test's burn under load (default 12).
# Needs: bash, coreutils (timeout), python3 (the comparisons); nvidia-smi for the comparison with
# NVIDIA's own tool (rows are marked "skip" without it); python3 with torch for the `run` step.
#
# Prints one summary table and exits 1 when any row disagrees or any step failed, else 0.
# Finishes in about 2 minutes on one GPU (each step has its own time limit).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin_dir=${1:-}
out=${ON_GPU_OUT:-$(mktemp -d /tmp/on-gpu.XXXXXX)}
burn=${ON_GPU_BURN:-12}
mkdir -p "$out"
start_all=$(date +%s)

if [ -z "$bin_dir" ]; then
    command -v cargo >/dev/null || { echo "on-gpu: no BIN_DIR given and no cargo to build with"; exit 2; }
    (cd "$here" && cargo build --release --bins) || { echo "on-gpu: the release build failed"; exit 2; }
    bin_dir=$here/target/release
fi
cli=$bin_dir/gpu-doctor-cli
[ -x "$cli" ] || { echo "on-gpu: $cli is missing or not executable"; exit 2; }
command -v python3 >/dev/null || { echo "on-gpu: python3 is needed for the comparisons"; exit 2; }

steps=$out/steps.tsv
: >"$steps"
# step NAME LIMIT_SECS OK_CODES CMD... : runs CMD with a time limit, stdout to NAME.out and
# stderr to NAME.err, and records the exit code and seconds. OK_CODES is a comma list.
step() {
    local name=$1 limit=$2 ok=$3
    shift 3
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout --kill-after=5 "$limit" "$@" >"$out/$name.out" 2>"$out/$name.err"
    rc=$?
    t1=$(date +%s.%N)
    printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$ok" "$(python3 -c "print(f'{$t1-$t0:.1f}')")" >>"$steps"
    echo "on-gpu: $name exit $rc"
}

echo "on-gpu: writing to $out"
"$cli" --version >"$out/version.out" 2>&1
if command -v nvidia-smi >/dev/null; then
    nvidia-smi >"$out/nvidia-smi.out" 2>&1
    nvidia-smi -q >"$out/nvidia-smi-q.out" 2>&1
fi
uname -a >"$out/uname.out"

step info 30 0 "$cli" info
step info-json 30 0 "$cli" info --json
if command -v nvidia-smi >/dev/null; then
    # NVIDIA's reading of the same static facts, taken right after ours.
    nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,memory.total,power.default_limit,clocks.max.sm,clocks.max.mem,pcie.link.gen.max,pcie.link.width.max,compute_cap \
        --format=csv,noheader,nounits >"$out/smi-static.csv" 2>"$out/smi-static.err"
fi
step check 60 0,6,7 "$cli" check
step check-json 60 0,6,7 "$cli" check --json
rm -rf "$out/capture"
step capture 60 0 "$cli" capture --out "$out/capture" --archive "$out/capture.tar.gz"
step check-from 60 0,6,7 "$cli" check --from "$out/capture" --json
step check-from-archive 60 0,6,7 "$cli" check --from "$out/capture.tar.gz" --json

# Idle readings: ten ticks of ours, then nvidia-smi's for the same quantities right after.
step monitor-idle 30 0 "$cli" monitor --json --count 10 --interval 1
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=index,temperature.gpu,power.draw,power.limit,memory.used,utilization.gpu,clocks.sm,clocks.mem,pcie.link.gen.current,pcie.link.width.current,pstate,fan.speed \
        --format=csv,noheader,nounits >"$out/smi-idle.csv" 2>"$out/smi-idle.err"
fi

step smoke 120 0,6 "$cli" smoke --json

# Under load: the smoke test's burn, watched by our monitor and by nvidia-smi side by side.
"$cli" monitor --json --interval 0.5 --count $((2 * burn + 120)) >"$out/monitor-load.out" 2>"$out/monitor-load.err" &
mon=$!
smi=""
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=index,utilization.gpu,power.draw,clocks.sm,memory.used --format=csv,noheader,nounits -lms 500 >"$out/smi-load.csv" 2>/dev/null &
    smi=$!
fi
sleep 2
step smoke-burn $((burn + 90)) 0,6 "$cli" smoke --json --burn "$burn"
sleep 2
[ -n "$smi" ] && kill "$smi" 2>/dev/null
kill "$mon" 2>/dev/null
wait 2>/dev/null

# A real GPU program measured by `run` (peak VRAM by process, utilization); needs torch.
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    cat >"$out/workload.py" <<'EOF'
import json, sys, time, torch
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
held = torch.empty(6 * 1024**3, dtype=torch.uint8, device="cuda")  # 6 GiB held on purpose
t = time.time()
while time.time() - t < 8:
    y = x @ x
torch.cuda.synchronize()
json.dump({"reserved": torch.cuda.memory_reserved(), "max_reserved": torch.cuda.max_memory_reserved()}, sys.stdout)
EOF
    step run-torch 90 0 "$cli" run --json-out "$out/run-summary.json" --quiet -- python3 "$out/workload.py"
    # A real training loop tuned: an MLP on synthetic data, whose memory grows with the batch
    # (activations of 16 layers of 8192) and whose speed saturates; `tune` must pick a batch that
    # keeps 20 % of the GPU free, stop for a stated reason and leave a whole journal. Trials of a
    # few seconds, at most 12, so it fits the step's limit on any GPU with 8 GiB or more.
    cat >"$out/train.py" <<'EOF'
import sys, time, torch
batch = int(sys.argv[1])
layers = [torch.nn.Linear(8192, 8192) for _ in range(16)]
model = torch.nn.Sequential(*[m for l in layers for m in (l, torch.nn.GELU())]).cuda().to(torch.bfloat16)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(batch, 8192, device="cuda", dtype=torch.bfloat16)
steps, t0 = 0, None
while True:
    loss = model(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    steps += 1
    if steps == 3:
        torch.cuda.synchronize()
        t0 = time.time()
    if t0 is not None and time.time() - t0 > 3:
        break
torch.cuda.synchronize()
print(f"{(steps - 3) * batch / (time.time() - t0):.1f} samples/s")
EOF
    step tune-torch 300 0 "$cli" tune --journal "$out/tune.jsonl" --max-trials 12 --trial-timeout 60 \
        --param batch=64..65536 --rate-pattern '([0-9.]+) samples/s' --json -- python3 "$out/train.py" '{batch}'
else
    printf 'run-torch\tskip\t0\t0\n' >>"$steps"
    printf 'tune-torch\tskip\t0\t0\n' >>"$steps"
fi

step report-md 90 0,6,7 "$cli" report --format md --sample 3 --smoke
step report-html 60 0,6,7 "$cli" report --format html --sample 2
step report-json 60 0,6,7 "$cli" report --format json --sample 2
step vram 30 0 "$cli" vram --preset llama-3.1-8b

if [ -x "$bin_dir/gpu-doctor" ] && command -v xvfb-run >/dev/null; then
    step gui-screenshot 120 0 xvfb-run -a -s "-screen 0 1400x900x24" "$bin_dir/gpu-doctor" --screenshot "$out/gui.png" --frames 30 --size 1280x800
fi

python3 "$here/scripts/on_gpu_compare.py" "$out" "$burn"
rc=$?
echo "on-gpu: $(( $(date +%s) - start_all )) s in all; outputs in $out"
exit $rc
