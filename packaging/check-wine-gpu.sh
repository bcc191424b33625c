#!/usr/bin/env bash
# The Windows build with GPUs, under Wine: the test-only fake NVML and CUDA driver libraries
# (tests/fake_nvml, tests/fake_cuda; never shipped) cross-built with mingw as nvml.dll and
# nvcuda.dll and put where the NVIDIA driver puts them (System32 of the Wine prefix). Then the
# Windows executables run as on a machine with two GPUs: the NVML path (info, monitor, check,
# capture, report), the CUDA smoke test in its child process, the Windows library search, the
# failure paths (NVML "driver not loaded", a GPU computing wrong results), a tune trial's Job
# Object and the window's Monitor and Smoke test tabs with GPUs (screenshots in LOGS to look at).
#
# Called by packaging/check.sh with the Wine environment set up (WINEPREFIX, DISPLAY, overrides):
#   packaging/check-wine-gpu.sh WINE GUI.exe CLI.exe LOGS [LINUX_CLI]
# LINUX_CLI, when given, reads the Windows capture back on Linux (check --from).
# Prints OK / FAIL / SKIP lines; exits 1 if any check failed.
set -uo pipefail
# The checks read English output; the Chinese run below asks for Chinese itself.
export GPU_DOCTOR_LANG=en
abs() { [ -n "$1" ] && realpath -m "$1"; }
wine=$1 gui=$(abs "$2") cli=$(abs "$3") logs=$(abs "$4") linux_cli=$(abs "${5:-}")
cd "$(dirname "$0")/.."
mkdir -p "$logs"
failed=0
ok() { echo "OK: $*"; }
bad() { echo "FAIL: $*"; failed=1; }
skip() { echo "SKIP: $*"; }
w() { timeout 120 "$wine" "$@"; }
winpath() { echo "Z:$(realpath "$1" | tr / '\\')"; }

cc=x86_64-w64-mingw32-gcc
if ! command -v $cc >/dev/null 2>&1; then
    skip "no mingw C compiler ($cc): the fake nvml.dll/nvcuda.dll cannot be built, the Windows build was not run with GPUs"
    exit 0
fi
sys32="$WINEPREFIX/drive_c/windows/system32"
# Plain C and the Win32 API only: the DLLs import KERNEL32 and msvcrt, as a driver's would not
# need anything else from the prefix.
$cc -shared -O2 -Wall -o "$sys32/nvml.dll" tests/fake_nvml/fake_nvml.c \
    && $cc -shared -O2 -Wall -o "$sys32/nvcuda.dll" tests/fake_cuda/fake_cuda.c \
    || { bad "building the fake nvml.dll / nvcuda.dll with mingw failed"; exit 1; }
rm -f "$sys32/fake-nvml.scenario" "$sys32/fake-cuda.scenario"
ok "fake NVIDIA driver libraries in the prefix: C:\\windows\\system32\\nvml.dll, nvcuda.dll (two GPUs, WDDM)"

w "$cli" info >"$logs/gpu-info.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -qi 'Source: NVML (C:\\windows\\system32\\nvml.dll)' "$logs/gpu-info.txt" \
    && [ "$(grep -c 'NVIDIA Fake Test GPU' "$logs/gpu-info.txt")" = 2 ]; then
    ok "wine info: NVML loaded from System32, 2 GPUs"
else bad "wine info with the fake driver: exit $rc: $(head -4 "$logs/gpu-info.txt")"; fi

w "$cli" monitor --count 2 --interval 0.5 --json >"$logs/gpu-monitor.jsonl" 2>"$logs/gpu-monitor.err"
rc=$?
python3 - "$logs/gpu-monitor.jsonl" <<'PY' 2>"$logs/gpu-monitor.check" && ok "wine monitor --json: 2 samples, both GPUs with utilization and VRAM" || bad "wine monitor: exit $rc: $(tail -2 "$logs/gpu-monitor.check") $(tail -2 "$logs/gpu-monitor.err")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
assert len(lines) == 2, len(lines)
for s in lines:
    gpus = s["gpus"]
    assert len(gpus) == 2, gpus
    for g in gpus:
        text = json.dumps(g)
        assert "util" in text and "mem" in text, text[:200]
PY

w "$cli" check --json >"$logs/gpu-check.json" 2>"$logs/gpu-check.err"
rc=$?
python3 - "$logs/gpu-check.json" <<'PY' 2>"$logs/gpu-check.check" && ok "wine check --json with GPUs: nvml.dll from System32 passes, cuInit passes, the driver model is WDDM, no Linux-only check (exit $rc)" || bad "wine check with GPUs: exit $rc: $(tail -3 "$logs/gpu-check.check")"
import json, sys
checks = {c["id"]: c for c in json.load(open(sys.argv[1], encoding="utf-8"))["checks"]}
def verdict(i):
    return checks[i]["verdict"]
assert verdict("WIN-04") == "pass", checks["WIN-04"]
assert "system32" in checks["WIN-04"]["summary"].lower(), checks["WIN-04"]
assert verdict("DRV-08") == "pass", checks["DRV-08"]
assert "WDDM" in checks["WIN-02"]["summary"], checks["WIN-02"]
# Wine lists no NVIDIA display adapter, but NVML answers: not "Windows does not see the GPU".
assert verdict("WIN-ADAPTER") != "fail", checks["WIN-ADAPTER"]
cuda = [c for c in checks.values() if "cuInit" in c["title"]]
assert cuda and all(c["verdict"] == "pass" for c in cuda), cuda
linux = [i for i in checks if i.split("-")[0] in ("CONT", "PERM", "WSL") or i in ("HW-01", "HW-02", "DRV-01", "DRV-05", "CUDA-LIB", "ENV-03", "RT-XID")]
assert not linux, linux
PY

cap="$logs/gpu-capture"
rm -rf "$cap"
w "$cli" capture --out "$(winpath "$logs")\\gpu-capture" >"$logs/gpu-capture.log" 2>&1
rc=$?
if [ $rc = 0 ] && [ -f "$cap/capture.json" ] && [ ! -e "$cap/fs/sys" ] && [ ! -e "$cap/fs/proc" ] \
    && python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["meta"]; assert m["platform"]=="windows" and m.get("windows") is not None' "$cap/capture.json"; then
    ok "wine capture: capture.json with the Windows facts, no Linux files (no /sys, /proc read on Windows)"
else bad "wine capture: exit $rc: $(tail -3 "$logs/gpu-capture.log") $(ls "$cap/fs" 2>&1 | head -3)"; fi
if [ -n "$linux_cli" ] && [ -x "$linux_cli" ] && [ -f "$cap/capture.json" ]; then
    "$linux_cli" check --from "$cap" --json >"$logs/gpu-capture-check.json" 2>/dev/null
    python3 -c '
import json, sys
ids = [c["id"] for c in json.load(open(sys.argv[1]))["checks"]]
assert "WIN-ADAPTER" in ids and "WIN-04" in ids and "PERM-01" not in ids, ids' "$logs/gpu-capture-check.json" 2>"$logs/gpu-capture-check.err" \
        && ok "the Windows capture read back on Linux (check --from) runs the Windows checklist" \
        || bad "check --from the Windows capture on Linux: $(tail -2 "$logs/gpu-capture-check.err")"
fi

w "$cli" smoke >"$logs/gpu-smoke.txt" 2>&1
rc=$?
# Under emulation the copies are slow (a WARN, exit 6); every computing stage must pass.
if { [ $rc = 0 ] || [ $rc = 6 ]; } && grep -q "PASS.*Run a kernel (saxpy, verified)" "$logs/gpu-smoke.txt" \
    && grep -q "PASS.*Matrix multiply (SGEMM, verified)" "$logs/gpu-smoke.txt" \
    && grep -qi 'nvcuda.dll' "$logs/gpu-smoke.txt"; then
    ok "wine smoke: nvcuda.dll found by Windows' DLL search, kernels verified (exit $rc)"
else bad "wine smoke: exit $rc: $(grep -E 'PASS|FAIL|WARN' "$logs/gpu-smoke.txt" | head -5)"; fi

echo "wrong = saxpy" >"$sys32/fake-cuda.scenario"
w "$cli" smoke >"$logs/gpu-smoke-wrong.txt" 2>&1
rc=$?
rm -f "$sys32/fake-cuda.scenario"
if [ $rc = 7 ] && grep -q "FAIL.*saxpy" "$logs/gpu-smoke-wrong.txt" && grep -q "Event Viewer" "$logs/gpu-smoke-wrong.txt" \
    && ! grep -q "dmesg" "$logs/gpu-smoke-wrong.txt"; then
    ok "wine smoke, a GPU computing a wrong value: exit 7, Windows advice (Event Viewer, no dmesg)"
else bad "wine smoke with wrong results: exit $rc: $(grep -E 'FAIL|Next' "$logs/gpu-smoke-wrong.txt" | head -3)"; fi

echo "init = 9" >"$sys32/fake-nvml.scenario"
w "$cli" info >"$logs/gpu-info-notloaded.txt" 2>&1
rc=$?
rm -f "$sys32/fake-nvml.scenario"
if [ $rc = 3 ] && grep -q "Device Manager" "$logs/gpu-info-notloaded.txt" && ! grep -q "lsmod" "$logs/gpu-info-notloaded.txt"; then
    ok "wine info, NVML 'driver not loaded': exit 3 pointing at Device Manager"
else bad "wine info with the driver not loaded: exit $rc: $(head -3 "$logs/gpu-info-notloaded.txt")"; fi

w "$cli" report --out "$(winpath "$logs")\\gpu-report.md" >"$logs/gpu-report.log" 2>&1
rc=$?
if [ -s "$logs/gpu-report.md" ] && grep -q "NVIDIA Fake Test GPU" "$logs/gpu-report.md" && grep -q "PASS\*\* nvml.dll: loaded C:.windows.System32.nvml.dll" "$logs/gpu-report.md"; then
    ok "wine report: the GPUs and the Windows checklist"
else bad "wine report: exit $rc: $(tail -3 "$logs/gpu-report.log")"; fi

# A tune trial's processes end with it (a Job Object per trial): the trial's command starts a
# ping in the background that would run for two minutes; once the tune has ended none is left.
pkill -f -i 'ping.exe -n 121' 2>/dev/null
w "$cli" tune --demo idle --max-trials 1 --trial-timeout 30 --journal "$(winpath "$logs")\\wine-tune.jsonl" \
    -- cmd /c "start /b ping -n 121 127.0.0.1 >nul & echo batch {batch} done" >"$logs/wine-tune.log" 2>&1
rc=$?
sleep 2
if [ $rc = 0 ] && ! pgrep -f -i 'ping.exe -n 121' >/dev/null; then
    ok "wine tune: the process a trial started in the background ended with the trial (Job Object)"
elif [ $rc = 0 ]; then
    bad "wine tune: a trial's background ping outlived it: $(pgrep -fa -i 'ping.exe -n 121' | head -2)"
    pkill -f -i 'ping.exe -n 121' 2>/dev/null
else bad "wine tune: exit $rc: $(tail -3 "$logs/wine-tune.log")"; fi

# Simplified Chinese on Windows: the text output in Chinese, --json the same bytes as in English.
w "$cli" --lang zh-CN check >"$logs/gpu-check-zh.txt" 2>&1
w "$cli" --lang zh-CN check --json >"$logs/gpu-check-zh.json" 2>/dev/null
if grep -q '检查清单' "$logs/gpu-check-zh.txt" && cmp -s "$logs/gpu-check.json" "$logs/gpu-check-zh.json"; then
    ok "wine check in Chinese (--lang zh-CN), --json unchanged"
else bad "wine check in Chinese: $(head -3 "$logs/gpu-check-zh.txt")"; fi

if [ -n "${DISPLAY:-}" ]; then
    timeout 180 "$wine" "$gui" --lang zh-CN --tab monitor --renderer gl --size 1280x800 --frames 20 \
        --screenshot "$(winpath "$logs")\\gpu-monitor-zh.png" >"$logs/gpu-gui-zh.log" 2>&1
    rc=$?
    if [ -s "$logs/gpu-monitor-zh.png" ] && python3 packaging/png-check.py "$logs/gpu-monitor-zh.png" 1280 800; then
        ok "wine GUI Monitor in Chinese: $logs/gpu-monitor-zh.png"
    else bad "wine GUI Monitor in Chinese (exit $rc): $(tail -3 "$logs/gpu-gui-zh.log")"; fi
    for tab in monitor smoke; do
        extra=()
        [ $tab = smoke ] && extra=(--run-smoke)
        timeout 180 "$wine" "$gui" --tab $tab "${extra[@]}" --renderer gl --size 1280x800 --frames 10 \
            --screenshot "$(winpath "$logs")\\gpu-$tab.png" >"$logs/gpu-gui-$tab.log" 2>&1
        rc=$?
        if [ -s "$logs/gpu-$tab.png" ] && python3 packaging/png-check.py "$logs/gpu-$tab.png" 1280 800; then
            ok "wine GUI $tab tab with the two GPUs: $logs/gpu-$tab.png"
        else bad "wine GUI $tab tab (exit $rc): $(tail -3 "$logs/gpu-gui-$tab.log")"; fi
    done
else skip "no X display: the window was not run with GPUs"; fi
rm -f "$sys32/nvml.dll" "$sys32/nvcuda.dll"
exit $failed
