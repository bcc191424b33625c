#!/usr/bin/env python3
"""Reads the outputs of scripts/on-gpu.sh and prints one summary table: each step's exit code,
and each quantity as gpu-doctor read it beside nvidia-smi's reading. Exits 1 on any failed step or
disagreement. Usage: on_gpu_compare.py OUT_DIR BURN_SECS"""
import csv
import json
import os
import re
import sys

out = sys.argv[1]
burn = float(sys.argv[2]) if len(sys.argv) > 2 else 12
rows = []  # (group, what, ours, theirs, result)


def add(group, what, ours, theirs, ok, note=""):
    result = "ok" if ok is True else ("skip" if ok is None else "DIFF")
    if note:
        result += f" ({note})"
    rows.append((group, what, str(ours), str(theirs), result))


def read(name):
    try:
        with open(os.path.join(out, name), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def load_json(name):
    text = read(name)
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def json_lines(name):
    items = []
    for line in (read(name) or "").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                items.append(json.loads(line))
            except ValueError:
                pass
    return items


def smi_csv(name):
    text = read(name)
    if not text:
        return []
    return [[c.strip() for c in r] for r in csv.reader(text.splitlines()) if r]


def num(s):
    if isinstance(s, dict):  # {"na": reason}: no reading
        return None
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def bus(s):
    """Normalises a PCI address to DDDDDDDD:BB:DD.F upper case (NVML and CUDA differ in domain width)."""
    if not s:
        return None
    m = re.match(r"(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-9a-fA-F])", s.strip())
    if not m:
        return s
    dom = int(m.group(1) or "0", 16)
    return f"{dom:08X}:{m.group(2).upper()}:{m.group(3).upper()}.{m.group(4)}"


def close(a, b, abs_tol, rel_tol=0.0):
    a, b = num(a), num(b)
    if a is None or b is None:
        return None
    return abs(a - b) <= max(abs_tol, rel_tol * max(abs(a), abs(b)))


# 1. Steps.
for line in (read("steps.tsv") or "").splitlines():
    name, rc, okcodes, secs = line.split("\t")
    if rc == "skip":
        add("step", name, "skipped", "", None, "needs python3 with torch and a GPU")
        continue
    ok = rc in okcodes.split(",")
    note = "timed out" if rc in ("124", "137") else ""
    add("step", name, f"exit {rc}", f"{secs} s", ok, note)

have_smi = read("nvidia-smi.out") is not None

# 2. Static facts: info --json against nvidia-smi --query-gpu.
info = load_json("info-json.out") or {}
inv = info.get("inventory") or {}
gpus = inv.get("gpus") or []
static = smi_csv("smi-static.csv")
if have_smi:
    add("static", "GPU count", len(gpus), len(static), len(gpus) == len(static))
    smi_text = read("nvidia-smi.out") or ""
    m = re.search(r"CUDA Version:\s*([0-9.]+)", smi_text)
    cuda_smi = m.group(1) if m else None
    add("static", "CUDA version of the driver", inv.get("cuda_driver_version"), cuda_smi,
        inv.get("cuda_driver_version") == cuda_smi if cuda_smi else None)
for row in static:
    if len(row) < 12:
        continue
    idx = int(row[0])
    g = next((g for g in gpus if g.get("index") == idx), None)
    if g is None:
        add("static", f"GPU {idx}", "missing", row[1], False)
        continue
    p = f"GPU {idx} "
    add("static", p + "name", g.get("name"), row[1], g.get("name") == row[1])
    add("static", p + "UUID", g.get("uuid"), row[2], g.get("uuid") == row[2])
    add("static", p + "PCI bus id", g.get("pci_bus_id"), row[3], bus(g.get("pci_bus_id")) == bus(row[3]))
    add("static", p + "driver", inv.get("driver_version"), row[4], inv.get("driver_version") == row[4])
    ours_mib = (g.get("vram_total_bytes") or 0) / 2**20
    add("static", p + "memory total (MiB)", f"{ours_mib:.0f}", row[5], close(ours_mib, num(row[5]), 2))
    add("static", p + "default power limit (W)", g.get("power_limit_default_w"), row[6],
        close(g.get("power_limit_default_w"), num(row[6]), 1))
    add("static", p + "max SM clock (MHz)", g.get("max_sm_clock_mhz"), row[7], close(g.get("max_sm_clock_mhz"), num(row[7]), 1))
    add("static", p + "max memory clock (MHz)", g.get("max_mem_clock_mhz"), row[8], close(g.get("max_mem_clock_mhz"), num(row[8]), 1))
    add("static", p + "max PCIe generation", g.get("max_pcie_gen"), row[9], close(g.get("max_pcie_gen"), num(row[9]), 0))
    add("static", p + "max PCIe width", g.get("max_pcie_width"), row[10], close(g.get("max_pcie_width"), num(row[10]), 0))
    add("static", p + "compute capability", g.get("compute_capability"), row[11],
        g.get("compute_capability") == row[11] if num(row[11]) is not None else None)
if not have_smi:
    add("static", "nvidia-smi", "", "not installed", None)

# 3. Idle readings: the last monitor tick against nvidia-smi taken right after it.
ticks = json_lines("monitor-idle.out")
add("monitor", "ticks printed (of 10)", len(ticks), 10, len(ticks) == 10)
last = ticks[-1] if ticks else {}
add("monitor", "source", last.get("source"), "NVML", "NVML" in str(last.get("source")))
add("monitor", "demo", last.get("demo"), False, last.get("demo") is False)
for row in smi_csv("smi-idle.csv"):
    if len(row) < 12:
        continue
    idx = int(row[0])
    g = next((g for g in last.get("gpus", []) if g.get("index") == idx), None)
    if g is None:
        add("idle", f"GPU {idx}", "missing", "present", False)
        continue
    p = f"GPU {idx} "
    add("idle", p + "health", g.get("health"), "", g.get("health") in ("Ok", "Asleep"))
    add("idle", p + "temperature (°C)", g.get("temp_c"), row[1], close(g.get("temp_c"), num(row[1]), 3))
    add("idle", p + "power (W)", g.get("power_w"), row[2], close(g.get("power_w"), num(row[2]), 20, 0.15))
    add("idle", p + "power limit (W)", g.get("power_limit_w"), row[3], close(g.get("power_limit_w"), num(row[3]), 1))
    used = (g.get("vram_used_bytes") or 0) / 2**20
    add("idle", p + "memory used (MiB)", f"{used:.0f}", row[4], close(used, num(row[4]), 256, 0.02))
    add("idle", p + "utilization (%)", g.get("util_gpu_pct"), row[5], close(g.get("util_gpu_pct"), num(row[5]), 15))
    add("idle", p + "SM clock (MHz)", g.get("sm_clock_mhz"), row[6], close(g.get("sm_clock_mhz"), num(row[6]), 60, 0.15))
    add("idle", p + "memory clock (MHz)", g.get("mem_clock_mhz"), row[7], close(g.get("mem_clock_mhz"), num(row[7]), 30, 0.05))
    add("idle", p + "PCIe generation now", g.get("pcie_gen"), row[8], close(g.get("pcie_gen"), num(row[8]), 0))
    add("idle", p + "PCIe width now", g.get("pcie_width"), row[9], close(g.get("pcie_width"), num(row[9]), 0))
    ps = row[10].lstrip("P")
    add("idle", p + "performance state", g.get("pstate"), row[10], close(g.get("pstate"), num(ps), 0) if num(ps) is not None else None)
    fan, ours_fan = num(row[11]), num(g.get("fan_pct"))
    add("idle", p + "fan (%)", g.get("fan_pct"), row[11],
        (ours_fan is None) if fan is None else close(ours_fan, fan, 5))

# 4. The checklist on a healthy machine, live and through a capture.
live = load_json("check-json.out") or {}
cap = load_json("check-from.out") or {}
arc = load_json("check-from-archive.out") or {}
smoke = load_json("smoke.out") or {}
stages = smoke.get("stages") or []
smoke_ok = bool(stages) and all(s.get("verdict") in ("pass", "warn") for s in stages)
rc_id = live.get("root_cause")
rc_check = next((c for c in live.get("checks", []) if c.get("id") == rc_id), {})
add("check", "root cause (live)", f'{rc_id}: {rc_check.get("finding")}' if rc_id else "none",
    "none expected: the smoke test passed" if smoke_ok else "smoke failed", (not rc_id) if smoke_ok else None)
fails = [c["id"] for c in live.get("checks", []) if c.get("verdict") == "fail"]
warns = [f'{c["id"]}: {c.get("finding")}' for c in live.get("checks", []) if c.get("verdict") == "warn"]
add("check", "failed checks (live)", ", ".join(fails) or "none", "", not fails if smoke_ok else None)
for w in warns:
    add("check", "warning (live)", w, "", None, "review")
verdicts = lambda d: {c["id"]: c.get("verdict") for c in d.get("checks", [])}
lv, cv, av = verdicts(live), verdicts(cap), verdicts(arc)
diff = sorted(k for k in lv if cv.get(k) != lv[k])
add("check", "capture → check --from matches live", ", ".join(f"{k}: {lv[k]}→{cv.get(k)}" for k in diff) or "same", "",
    not diff and bool(cv))
add("check", "archive → check --from matches the folder", "same" if av == cv else "differs", "", av == cv and bool(av))

# 5. The smoke test.
for s in stages:
    add("smoke", s.get("stage"), s.get("verdict"), s.get("summary", "")[:70], s.get("verdict") in ("pass", "warn"))
devs = smoke.get("devices") or []
if devs and gpus:
    d0 = devs[0]
    g0 = next((g for g in gpus if bus(g.get("pci_bus_id")) == bus(d0.get("pci_bus_id"))), None)
    add("smoke", "CUDA device 0 is an NVML GPU", d0.get("pci_bus_id"), g0.get("pci_bus_id") if g0 else "none",
        g0 is not None)
    if g0:
        cc = ".".join(str(x) for x in d0.get("compute_capability", []))
        add("smoke", "compute capability (CUDA vs NVML)", cc, g0.get("compute_capability"), cc == g0.get("compute_capability"))
burn_json = load_json("smoke-burn.out") or {}
bstages = burn_json.get("stages") or []
add("smoke", "burn stages", ", ".join(f'{s.get("stage")}={s.get("verdict")}' for s in bstages)[:90], "",
    bool(bstages) and all(s.get("verdict") in ("pass", "warn") for s in bstages))

# 6. Under load: our monitor against nvidia-smi during the burn.
load_ticks = json_lines("monitor-load.out")
ours_util = [g.get("util_gpu_pct") or 0 for t in load_ticks for g in t.get("gpus", []) if g.get("index") == 0]
ours_pow = [g.get("power_w") or 0 for t in load_ticks for g in t.get("gpus", []) if g.get("index") == 0]
smi_load = [r for r in smi_csv("smi-load.csv") if r and r[0] == "0"]
smi_util = [num(r[1]) or 0 for r in smi_load]
smi_pow = [num(r[2]) or 0 for r in smi_load]
add("load", "ticks during the burn", len(ours_util), len(smi_util), len(ours_util) >= burn)
if ours_util:
    busy = sum(1 for u in ours_util if u >= 90)
    add("load", "GPU 0 peak utilization (%)", max(ours_util), max(smi_util) if smi_util else "",
        max(ours_util) >= 90 and (close(max(ours_util), max(smi_util), 10) if smi_util else True))
    add("load", "GPU 0 ticks ≥ 90 % (ours vs smi)", busy, sum(1 for u in smi_util if u >= 90),
        busy >= burn * 0.5 * 2 * 0.6)
    add("load", "GPU 0 peak power (W)", max(ours_pow), max(smi_pow) if smi_pow else "",
        close(max(ours_pow), max(smi_pow), 40, 0.15) if smi_pow else None)

# 7. A real program under `run`.
run = load_json("run-summary.json")
work = load_json("run-torch.out")
if run:
    peak = run.get("vram_peak_process") or 0
    want = (work or {}).get("max_reserved") or 0
    # The process holds its tensors plus the CUDA context (a few hundred MiB).
    add("run", "peak VRAM of the process (GiB)", f"{peak / 2**30:.2f}", f"torch reserved {want / 2**30:.2f} + context",
        want > 0 and want <= peak <= want + 2 * 2**30)
    g = (run.get("gpus") or [{}])[0]
    add("run", "GPU 0 peak utilization (%)", g.get("util_peak"), "≥ 90 expected", (g.get("util_peak") or 0) >= 90)
    add("run", "exit", run.get("ended"), "exited 0", run.get("ended") == {"kind": "exited", "code": 0})

# 7b. A real training loop tuned (tune-torch.out is `tune --json`).
tune = load_json("tune-torch.out")
if tune:
    trials = tune.get("trials") or []
    outcome = (tune.get("end") or {}).get("outcome") or {}
    best = next((t for t in trials if t.get("id") == outcome.get("best")), None)
    add("tune", "an answer", best and best["setting"], "a batch", best is not None)
    if best:
        total, peak = best.get("device_total") or 0, best.get("device_peak") or 0
        add("tune", "chosen batch keeps 20 % free", f"{peak / 2**30:.1f} of {total / 2**30:.1f} GiB", "≤ 80 %",
            total > 0 and peak <= 0.8 * total)
        add("tune", "chosen batch's throughput is the best measured", best.get("throughput"),
            max((t.get("throughput") or 0) for t in trials), (best.get("throughput") or 0) >= 0.9 * max((t.get("throughput") or 0) for t in trials))
    stops = [p.get("stop", {}).get("kind") for p in outcome.get("phases") or []]
    add("tune", "why it stopped", ",".join(map(str, stops)), "a stated reason", bool(stops))
    ooms = sum(1 for t in trials if (t.get("end") or {}).get("kind") == "out-of-memory")
    add("tune", "out-of-memory trials recognised", ooms, "PyTorch's message", True,
        "; ".join(sorted({t["end"]["oom"]["framework"] for t in trials if t["end"].get("kind") == "out-of-memory"})))

# 8. Reports and the VRAM tab's knowledge of this GPU.
md = read("report-md.out") or ""
name0 = gpus[0].get("name") if gpus else None
add("report", "Markdown names the GPU", bool(name0 and name0 in md), name0, bool(name0 and name0 in md))
add("report", "Markdown has the smoke test", "smoke" in md.lower(), "", "smoke" in md.lower())
html = read("report-html.out") or ""
add("report", "HTML is one page", html[:15].strip(), "<!DOCTYPE html>", html.lstrip().lower().startswith("<!doctype html"))
rj = load_json("report-json.out")
add("report", "JSON parses", rj is not None, "", rj is not None)
vr = read("vram.out") or ""
add("vram", "knows this machine's GPU", bool(name0 and name0 in vr), name0, bool(name0 and name0 in vr))

# The table.
widths = [max(len(r[i]) for r in rows) for i in range(5)] if rows else [0] * 5
widths = [min(w, 46) for w in widths]
header = ("group", "what", "gpu-doctor", "nvidia-smi / expected", "result")
lines = [header] + rows
text = []
for r in lines:
    text.append("  ".join(str(c)[:46].ljust(widths[i] if i < 4 else 0) for i, c in enumerate(r)).rstrip())
bad = [r for r in rows if r[4].startswith("DIFF")]
text.append("")
text.append(f"{len(rows)} rows: {sum(r[4].startswith('ok') for r in rows)} ok, {len(bad)} disagree, "
            f"{sum(r[4].startswith('skip') for r in rows)} skipped")
summary = "\n".join(text)
print(summary)
with open(os.path.join(out, "summary.txt"), "w", encoding="utf-8") as f:
    f.write(summary + "\n")
sys.exit(1 if bad else 0)
