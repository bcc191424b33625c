#!/usr/bin/env python3
"""Builds and checks the smoke test's PTX (assets/kernels/smoke.ptx) from its CUDA C source.

  kernels.py build --nvrtc LIBNVRTC            regenerate smoke.ptx from smoke.cu
  kernels.py check --nvrtc LIBNVRTC --ptxas P  prove smoke.ptx is what smoke.cu produces, and that
                                               it assembles with ptxas for sm_50 ... sm_90

The PTX comes from NVRTC (the runtime compiler library; no nvcc needed) for compute_50. NVRTC
writes the PTX ISA version of its own release (8.4 for CUDA 12.4), which a driver older than that
release refuses (CUDA_ERROR_UNSUPPORTED_PTX_VERSION). The kernels use only instructions from PTX
ISA 6.0 (CUDA 9.0), so the `.version` line is lowered to 6.0 and the compiler banner replaced by a
header saying so; ptxas then proves the result is valid PTX for every architecture listed.
"""
import argparse
import ctypes
import difflib
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "..", "assets", "kernels")
SOURCE = os.path.join(KERNELS, "smoke.cu")
PTX = os.path.join(KERNELS, "smoke.ptx")
ARCH = "compute_50"
ISA = "6.0"
NVRTC_RELEASE = "12.4"
CHECK_ARCHS = ["sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"]
ENTRIES = ["saxpy", "sgemm", "count_mismatches"]


def compile_ptx(libnvrtc: str) -> str:
    lib = ctypes.CDLL(libnvrtc)
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    if f"{major.value}.{minor.value}" != NVRTC_RELEASE:
        sys.exit(f"NVRTC {major.value}.{minor.value} found; the checked-in PTX is made with NVRTC {NVRTC_RELEASE}")
    with open(SOURCE, "rb") as f:
        src = f.read()
    prog = ctypes.c_void_p()
    check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"smoke.cu", 0, None, None), "create")
    opts = [f"--gpu-architecture={ARCH}".encode(), b"--std=c++11"]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    res = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if res != 0:
        sys.exit(f"NVRTC failed ({res}):\n{log.value.decode(errors='replace')}")
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    out = ctypes.create_string_buffer(size.value)
    check(lib, lib.nvrtcGetPTX(prog, out), "get PTX")
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return finish(out.value.decode())


def check(lib, code, what):
    if code != 0:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        sys.exit(f"NVRTC {what}: {lib.nvrtcGetErrorString(code).decode()}")


def finish(ptx: str) -> str:
    """Replaces NVRTC's banner with ours and lowers the PTX ISA version."""
    body = re.sub(r"\A(//[^\n]*\n)+\n*", "", ptx)
    body, n = re.subn(r"^\.version \d+\.\d+$", f".version {ISA}", body, count=1, flags=re.M)
    if n != 1:
        sys.exit("no .version line in NVRTC's output")
    header = (
        "//\n"
        "// gpu-doctor smoke-test kernels: generated from smoke.cu by scripts/kernels.py\n"
        f"// (NVRTC {NVRTC_RELEASE}, --gpu-architecture={ARCH}). Do not edit; rebuild instead.\n"
        f"// The .version line is lowered to PTX ISA {ISA} (CUDA 9.0) so that old drivers JIT it too;\n"
        "// scripts/kernels.py check proves it assembles for sm_50 ... sm_90.\n"
        "//\n\n"
    )
    return header + body.rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("action", choices=["build", "check"])
    ap.add_argument("--nvrtc", required=True, help="path of libnvrtc.so")
    ap.add_argument("--ptxas", help="path of ptxas (check only)")
    a = ap.parse_args()
    fresh = compile_ptx(a.nvrtc)
    if a.action == "build":
        with open(PTX, "w") as f:
            f.write(fresh)
        print(f"wrote {os.path.relpath(PTX)}")
        return
    with open(PTX) as f:
        current = f.read()
    if current != fresh:
        diff = difflib.unified_diff(current.splitlines(), fresh.splitlines(), "checked-in", "from smoke.cu", lineterm="")
        sys.exit("assets/kernels/smoke.ptx is not what smoke.cu produces; run scripts/kernels.py build\n" + "\n".join(diff))
    print(f"smoke.ptx matches smoke.cu (NVRTC {NVRTC_RELEASE}, {ARCH}, ISA {ISA})")
    for entry in ENTRIES:
        if not re.search(rf"^\.visible \.entry {entry}\(", current, re.M):
            sys.exit(f"entry point {entry} missing from smoke.ptx")
    if not a.ptxas:
        sys.exit("--ptxas is required for check")
    with tempfile.TemporaryDirectory() as tmp:
        for arch in CHECK_ARCHS:
            out = os.path.join(tmp, f"{arch}.cubin")
            r = subprocess.run([a.ptxas, f"-arch={arch}", "-o", out, PTX], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"ptxas -arch={arch} failed:\n{r.stderr}")
            print(f"ptxas -arch={arch}: ok ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main()
