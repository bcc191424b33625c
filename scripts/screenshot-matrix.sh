#!/usr/bin/env bash
# Takes the screenshot matrix a release is looked at with: every tab in both themes at 1024x640
# and 1920x1080 with 1, 2 and 8 demo GPUs; the support card; this machine as it is (in a
# container without GPUs: the no-GPU path); and the fake NVML scenarios when the test-only
# library was built (cargo test --test suite fake_nvml::); then every tab in Simplified Chinese at both
# sizes, a broken machine's checklist included. Prints one line per PNG written.
#
# Usage: scripts/screenshot-matrix.sh [BINARY] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/gpu-doctor}
out=${2:-target/screenshots}
[ -x "$bin" ] || cargo build --release --bin gpu-doctor
command -v xvfb-run >/dev/null || { echo "xvfb-run not installed (apt-get install xvfb)"; exit 1; }
mkdir -p "$out"
tabs="monitor checklist vram smoke tune about"
shot() { # name args...
    local name=$1; shift
    if xvfb-run -a -s "-screen 0 2000x1200x24" "$bin" --screenshot "$out/$name.png" --frames 20 "$@" >/dev/null 2>&1; then
        echo "$out/$name.png"
    else
        echo "FAILED: $name ($*)"
    fi
}
for theme in light dark; do
    for size in 1024x640 1920x1080; do
        for n in 1 2 8; do
            for tab in $tabs; do
                shot "demo-$tab-$theme-$size-${n}gpu" --demo data-starved --gpus "$n" --tab "$tab" --theme "$theme" --size "$size"
            done
            shot "demo-card-$theme-$size-${n}gpu" --demo data-starved --gpus "$n" --support-card --theme "$theme" --size "$size"
        done
        for tab in $tabs; do
            shot "machine-$tab-$theme-$size" --tab "$tab" --theme "$theme" --size "$size"
        done
    done
done
for size in 1024x640 1920x1080; do
    for tab in $tabs; do
        shot "zh-demo-$tab-$size-2gpu" --lang zh-CN --demo data-starved --gpus 2 --tab "$tab" --size "$size"
    done
    shot "zh-demo-card-$size-2gpu" --lang zh-CN --demo data-starved --gpus 2 --support-card --size "$size"
    shot "zh-checklist-mismatch-$size" --lang zh-CN --tab checklist --size "$size" \
        --checklist-from tests/fixtures/version-mismatch-after-upgrade
    # Titles that name what is checked, a failing one read as question and answer (issue 38).
    shot "zh-checklist-container-$size" --lang zh-CN --tab checklist --size "$size" \
        --checklist-from tests/fixtures/container-without-gpus
    shot "checklist-container-$size" --tab checklist --size "$size" \
        --checklist-from tests/fixtures/container-without-gpus
    # A support card made from a user's capture: that machine only, its user redacted (issue 38).
    shot "card-from-capture-$size" --tab checklist --support-card --size "$size" \
        --checklist-from tests/fixtures/user-not-in-video-group
    shot "zh-card-from-capture-$size" --lang zh-CN --tab checklist --support-card --size "$size" \
        --checklist-from tests/fixtures/user-not-in-video-group
    # Eight GPUs on the card at the smallest size: it scrolls instead of clipping.
    shot "demo-card-$size-8gpu" --demo healthy-training --gpus 8 --support-card --size "$size"
done
lib=target/tmp/fake-nvml
if [ -d "$lib" ]; then
    for sc in tests/fake_nvml/scenarios/*.scenario; do
        name=$(basename "$sc" .scenario)
        LD_LIBRARY_PATH=$lib FAKE_NVML_SCENARIO=$sc shot "fake-nvml-$name" --theme dark --size 1280x800
    done
    # The process table with a job of this user (a sleep the fake says holds 6 GiB and 40 % of the
    # GPU): its share of the GPU and of the video engines, and End... (issue 38, item 15). Tall,
    # so the table is in the picture; enough frames for the slow reading of the process list.
    work=$(mktemp -d)
    sleep 300 &
    job=$!
    echo "6442450944 40" >"$work/$job"
    printf 'gpus = 1\nvram_dir = %s\nvram_total_gib = 24\n' "$work" >"$work/job.scenario"
    if LD_LIBRARY_PATH=$lib FAKE_NVML_SCENARIO=$work/job.scenario xvfb-run -a -s "-screen 0 1400x2000x24" \
        "$bin" --screenshot "$out/fake-nvml-process-table.png" --frames 200 --tab monitor --size 1400x2000 \
        >/dev/null 2>&1; then
        echo "$out/fake-nvml-process-table.png"
    else
        echo "FAILED: fake-nvml-process-table"
    fi
    kill "$job"
    rm -rf "$work"
else
    echo "no fake NVML library at $lib (cargo test --test suite fake_nvml:: builds it): fake NVML shots skipped"
fi
