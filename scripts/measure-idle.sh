#!/usr/bin/env bash
# Measures the GUI's idle cost under Xvfb: CPU (% of one core) averaged over a window, resident
# memory, and the start-to-first-frame time; then the same CPU figure for btop at a 1 s update in
# a tmux terminal on the same machine, for comparison.
#
# Usage: scripts/measure-idle.sh [SECONDS] [BINARY]
#   SECONDS  measurement window (default 60)
#   BINARY   gpu-doctor binary (default target/release/gpu-doctor, built if missing)
# Needs: Xvfb (xvfb package), optionally btop and tmux for the comparison.
set -euo pipefail
secs=${1:-60}
bin=${2:-target/release/gpu-doctor}
cd "$(dirname "$0")/.."
[ -x "$bin" ] || cargo build --release --bin gpu-doctor
command -v Xvfb >/dev/null || { echo "Xvfb not installed (apt-get install xvfb)"; exit 1; }

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_mib() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
# measure PID LABEL: prints the line and leaves the figure (% of one core) in $last.
last=""
measure() {
    local a b
    a=$(cpu_ticks "$1"); sleep "$secs"; b=$(cpu_ticks "$1")
    last=$(awk -v a="$a" -v b="$b" -v hz="$hz" -v s="$secs" 'BEGIN { printf "%.2f", 100 * (b - a) / hz / s }')
    echo "$2: $last % of one core over $secs s"
}

display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb ${app:-} ${tm:-} 2>/dev/null || true; tmux kill-session -t gdidle 2>/dev/null || true' EXIT
sleep 1

log=$(mktemp)
DISPLAY=$display GPU_DOCTOR_STARTUP_TIMING=1 "$bin" --demo healthy-training --gpus 4 --size 1280x800 --interval 1 2>"$log" &
app=$!
sleep 5
grep -h "first frame" "$log" || echo "(no first-frame line)"
measure "$app" "gpu-doctor GUI, 4 demo GPUs, 1280x800, 1 s interval"
app_cpu=$last
# Frames per second and each frame's time before the buffer swap, from the app's own counter.
grep -h "frames/s" "$log" | tail -1 || true
echo "gpu-doctor resident memory: $(rss_mib "$app") MiB"
kill "$app"; wait "$app" 2>/dev/null || true

# The same app opened with 24 h of simulated 1 s history (the demo prefill), 24 h window not
# selected: resident memory with a full history, and its idle CPU.
DISPLAY=$display GPU_DOCTOR_DEMO_PREFILL_SECS=86400 "$bin" --demo healthy-training --gpus 4 --size 1280x800 --interval 1 2>/dev/null &
app=$!
sleep 10
echo "gpu-doctor resident memory with 24 h of history (4 GPUs): $(rss_mib "$app") MiB"
measure "$app" "gpu-doctor GUI with 24 h history"
kill "$app"; wait "$app" 2>/dev/null || true

if command -v btop >/dev/null && command -v tmux >/dev/null; then
    cfg=$(mktemp -d)
    mkdir -p "$cfg/btop"
    printf 'update_ms = 1000\n' > "$cfg/btop/btop.conf"
    tmux new-session -d -s gdidle -x 200 -y 50 "XDG_CONFIG_HOME=$cfg btop"
    sleep 5
    bpid=$(pgrep -n -x btop || true)
    if [ -n "$bpid" ]; then
        measure "$bpid" "btop 1 s update in tmux 200x50 (same machine)"
        awk -v a="$app_cpu" -v b="$last" 'BEGIN { if (b > 0) printf "gpu-doctor / btop: %.2fx\n", a / b }'
    else
        echo "btop did not start"
    fi
else
    echo "btop or tmux not installed: no comparison (apt-get install btop tmux)"
fi
