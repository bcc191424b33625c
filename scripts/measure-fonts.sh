#!/usr/bin/env bash
# Measures what the bundled Chinese font costs: the bytes it adds to the binary, and the resident
# memory and start-to-first-frame time of the window under Xvfb without it
# (GPU_DOCTOR_NO_CJK_FONT=1), with it in English, and with it in Chinese (every glyph on screen
# rasterised). Each configuration runs RUNS times; the medians are printed.
#
# Usage: scripts/measure-fonts.sh [RUNS] [BINARY]
#   RUNS    runs per configuration (default 5)
#   BINARY  gpu-doctor binary (default target/measure/gpu-doctor; cargo build --profile measure)
# Needs: Xvfb (xvfb package).
set -euo pipefail
runs=${1:-5}
bin=${2:-target/measure/gpu-doctor}
cd "$(dirname "$0")/.."
[ -x "$bin" ] || cargo build --profile measure --bin gpu-doctor
command -v Xvfb >/dev/null || { echo "Xvfb not installed (apt-get install xvfb)"; exit 1; }

font=assets/fonts/NotoSansSC-gpu-doctor.otf
catalogue=$(cat i18n/zh-CN/*.ron | wc -c)
echo "binary: $(stat -c %s "$bin") bytes; of them the font $(stat -c %s "$font") bytes and the catalogue $catalogue bytes (include_bytes/include_str)"

display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb ${app:-} 2>/dev/null || true' EXIT
sleep 1

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "n/a" }'; }
# run LABEL ENV... -- ARGS...: RUNS starts; median first-frame ms and resident MiB after 4 s.
run() {
    local label=$1; shift
    local envs=() ; while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    local frames=() rss=()
    for _ in $(seq "$runs"); do
        log=$(mktemp)
        env DISPLAY="$display" GPU_DOCTOR_STARTUP_TIMING=1 "${envs[@]}" "$bin" --demo data-starved --gpus 2 \
            --size 1280x800 "$@" 2>"$log" &
        app=$!
        sleep 4
        frames+=("$(grep -ho 'first frame [0-9]*' "$log" | awk '{print $3}' | head -1)")
        rss+=("$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$app/status")")
        kill "$app"; wait "$app" 2>/dev/null || true
        rm -f "$log"
    done
    printf '%-34s first frame %6s ms   resident %6s MiB\n' "$label" \
        "$(printf '%s\n' "${frames[@]}" | median)" "$(printf '%s\n' "${rss[@]}" | median)"
}
run "no Chinese font, English" GPU_DOCTOR_NO_CJK_FONT=1 -- --lang en --tab monitor
run "Chinese font, English" GPU_DOCTOR_LANG=en -- --lang en --tab monitor
run "Chinese font, Chinese (Monitor)" GPU_DOCTOR_LANG=zh-CN -- --lang zh-CN --tab monitor
run "Chinese font, Chinese (Checklist)" GPU_DOCTOR_LANG=zh-CN -- --lang zh-CN --tab checklist
