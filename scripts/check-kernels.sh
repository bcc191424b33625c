#!/usr/bin/env bash
# Proves the smoke test's checked-in PTX (assets/kernels/smoke.ptx) is what assets/kernels/smoke.cu
# produces and that it assembles with ptxas for sm_50 ... sm_90. The compilers come from NVIDIA's
# Python wheels (NVRTC from nvidia-cuda-nvrtc-cu12, ptxas from nvidia-cuda-nvcc-cu12), installed
# into target/cuda-tools; no GPU and no CUDA toolkit needed. Skips with a clear line when the
# wheels cannot be installed (no pip, no registry).
#   scripts/check-kernels.sh          check
#   scripts/check-kernels.sh build    regenerate smoke.ptx after editing smoke.cu
set -euo pipefail
cd "$(dirname "$0")/.."
tools=target/cuda-tools
nvrtc=$tools/nvidia/cuda_nvrtc/lib/libnvrtc.so.12
ptxas=$tools/nvidia/cuda_nvcc/bin/ptxas
if [[ ! -e $nvrtc || ! -e $ptxas ]]; then
    mkdir -p "$tools"
    if ! python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$tools" \
        nvidia-cuda-nvrtc-cu12==12.4.127 nvidia-cuda-nvcc-cu12==12.9.86; then
        echo "SKIP kernel check: could not install the NVRTC/ptxas wheels with pip"
        exit 0
    fi
fi
chmod +x "$ptxas"
if [[ ${1:-check} == build ]]; then
    python3 scripts/kernels.py build --nvrtc "$nvrtc"
else
    python3 scripts/kernels.py check --nvrtc "$nvrtc" --ptxas "$ptxas"
fi
