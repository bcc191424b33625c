//! The checklist on the capture fixtures under tests/fixtures/ (written by
//! `cargo run --example make_fixtures`): every check's verdict, what blocks what, the root cause,
//! the exit code, and the fix text a newcomer is given. Plus broken captures and parser properties.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use gpu_doctor::diagnose::system::{CaptureError, CapturedSystem};
use gpu_doctor::diagnose::{self, Verdict, parse};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// The checklist run on fixture `name`.
fn report(name: &str) -> diagnose::Report {
    diagnose::run(&CapturedSystem::open(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// (fixture, exit code of `check`, root cause, every check as id=verdict[<blocked_by]).
const EXPECTED: &[(&str, i32, Option<&str>, &str)] = &[
    (
        "wsl-nvidia-utils-shadows-nvml",
        7,
        Some("WSL-02"),
        "HW-01=info HW-02=skipped DRV-01=skipped DRV-02=skipped DRV-04=pass DRV-05=skipped DRV-HUNG=pass DRV-08=pass DRV-06=skipped HW-03=skipped DRV-09=skipped DRV-10=skipped CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=skipped PERM-02=skipped WSL-01=pass WSL-02=fail WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=skipped<WSL-02 RT-05=pass RT-04=skipped RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "wsl-libnvidia-compute-470-inside",
        7,
        Some("WSL-02"),
        "HW-01=info HW-02=skipped DRV-01=skipped DRV-02=skipped DRV-04=pass DRV-05=skipped DRV-HUNG=pass DRV-08=pass DRV-06=skipped HW-03=skipped DRV-09=skipped DRV-10=skipped CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=skipped PERM-02=skipped WSL-01=pass WSL-02=fail WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=skipped<WSL-02 RT-05=pass RT-04=skipped RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "wsl-lib-folder-off-the-loader-path",
        7,
        Some("WSL-02"),
        "HW-01=info HW-02=skipped DRV-01=skipped DRV-02=skipped DRV-04=pass DRV-05=skipped DRV-HUNG=pass DRV-08=pass DRV-06=skipped HW-03=skipped DRV-09=skipped DRV-10=skipped CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=skipped PERM-02=skipped WSL-01=pass WSL-02=fail WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=skipped<WSL-02 RT-05=pass RT-04=skipped RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "mig-on-without-instances-a100-sxm",
        7,
        Some("RT-06"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=fail RT-07=pass",
    ),
    (
        "mig-on-without-instances-cuda-no-device",
        7,
        Some("RT-06"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=fail CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=fail RT-07=pass",
    ),
    (
        "container-lost-gpus-after-daemon-reload",
        7,
        Some("CONT-02"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=skipped DRV-HUNG=skipped DRV-08=skipped<CONT-02 DRV-06=pass HW-03=skipped<CONT-02 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<CONT-02 CUDA-LIB=pass CUDA-INIT=skipped<CONT-02 CUDA-04=skipped<CONT-02 CUDA-08=skipped<CONT-02 CUDA-07=skipped<CONT-02 CONT-01=info CONT-02=fail PERM-01=pass PERM-02=fail WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<CONT-02 RT-03=skipped<CONT-02 RT-XID=skipped<CONT-02 RT-05=skipped<CONT-02 RT-04=skipped<CONT-02 RT-ECC=skipped<CONT-02 RT-08=skipped<CONT-02 RT-06=skipped<CONT-02 RT-07=skipped<CONT-02",
    ),
    (
        "container-lost-gpus-a10-t4",
        7,
        Some("CONT-02"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=skipped DRV-HUNG=skipped DRV-08=skipped<CONT-02 DRV-06=pass HW-03=skipped<CONT-02 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<CONT-02 CUDA-LIB=pass CUDA-INIT=skipped<CONT-02 CUDA-04=skipped<CONT-02 CUDA-08=skipped<CONT-02 CUDA-07=skipped<CONT-02 CONT-01=info CONT-02=fail PERM-01=pass PERM-02=fail WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<CONT-02 RT-03=skipped<CONT-02 RT-XID=skipped<CONT-02 RT-05=skipped<CONT-02 RT-04=skipped<CONT-02 RT-ECC=skipped<CONT-02 RT-08=skipped<CONT-02 RT-06=skipped<CONT-02 RT-07=skipped<CONT-02",
    ),
    (
        "lockdown-refuses-unsigned-module",
        7,
        Some("DRV-05"),
        "HW-01=pass HW-02=skipped<DRV-01 DRV-01=skipped<DRV-05 DRV-02=skipped DRV-04=pass DRV-05=fail DRV-HUNG=skipped DRV-08=skipped<DRV-05 DRV-06=skipped<DRV-05 HW-03=skipped<DRV-05 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-05 CUDA-LIB=pass CUDA-INIT=skipped<DRV-05 CUDA-04=skipped<DRV-05 CUDA-08=skipped<DRV-05 CUDA-07=skipped<DRV-05 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-05 PERM-02=skipped<DRV-05 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-05 RT-03=skipped<DRV-05 RT-XID=pass RT-05=skipped<DRV-05 RT-04=skipped<DRV-05 RT-ECC=skipped<DRV-05 RT-08=skipped<DRV-05 RT-06=skipped<DRV-05 RT-07=skipped<DRV-05",
    ),
    (
        "secure-boot-key-rejected-dkms",
        7,
        Some("DRV-05"),
        "HW-01=pass HW-02=skipped<DRV-01 DRV-01=skipped<DRV-05 DRV-02=skipped DRV-04=pass DRV-05=fail DRV-HUNG=skipped DRV-08=skipped<DRV-05 DRV-06=skipped<DRV-05 HW-03=skipped<DRV-05 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-05 CUDA-LIB=pass CUDA-INIT=skipped<DRV-05 CUDA-04=skipped<DRV-05 CUDA-08=skipped<DRV-05 CUDA-07=skipped<DRV-05 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-05 PERM-02=skipped<DRV-05 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-05 RT-03=skipped<DRV-05 RT-XID=pass RT-05=skipped<DRV-05 RT-04=skipped<DRV-05 RT-ECC=skipped<DRV-05 RT-08=skipped<DRV-05 RT-06=skipped<DRV-05 RT-07=skipped<DRV-05",
    ),
    (
        "pcie-aer-fatal-errors-no-xid",
        6,
        None,
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=warn RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "torch-cu121-in-project-venv-driver-470",
        7,
        Some("CUDA-04"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=fail CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "torch-cu121-container-driver-450",
        7,
        Some("CUDA-04"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=skipped DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=skipped DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=fail CUDA-08=skipped CUDA-07=pass CONT-01=info CONT-02=pass PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "torch-cu121-conda-env-elsewhere-driver-470",
        7,
        Some("CUDA-04"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=fail CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "xid-79-after-pcie-surprise-down",
        7,
        Some("RT-LOST"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=fail CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=fail RT-03=skipped RT-XID=fail RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "rminitadapter-failed-gsp-no-xid",
        7,
        Some("HW-03"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=fail DRV-09=info DRV-10=skipped CUDA-01=info CUDA-LIB=pass CUDA-INIT=fail CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=warn RT-05=skipped RT-04=skipped RT-ECC=skipped RT-08=skipped RT-06=skipped RT-07=skipped",
    ),
    (
        "gsp-error-then-rpc-timeout-driver-hung",
        7,
        Some("DRV-HUNG"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=fail DRV-08=skipped DRV-06=pass HW-03=skipped DRV-09=info DRV-10=skipped CUDA-01=skipped CUDA-LIB=pass CUDA-INIT=fail CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=fail RT-03=skipped RT-XID=fail RT-05=skipped RT-04=skipped RT-ECC=skipped RT-08=skipped RT-06=skipped RT-07=skipped",
    ),
    (
        "nvidia-smi-stuck-in-d-state",
        7,
        Some("DRV-HUNG"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=fail DRV-08=skipped DRV-06=pass HW-03=skipped DRV-09=info DRV-10=skipped CUDA-01=skipped CUDA-LIB=pass CUDA-INIT=fail CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=fail RT-03=skipped RT-XID=skipped RT-05=skipped RT-04=skipped RT-ECC=skipped RT-08=skipped RT-06=skipped RT-07=skipped",
    ),
    (
        "run-installer-module-for-old-kernel",
        7,
        Some("DRV-01"),
        "HW-01=pass HW-02=skipped<DRV-01 DRV-01=fail DRV-02=skipped DRV-04=pass DRV-05=pass DRV-HUNG=skipped DRV-08=skipped<DRV-01 DRV-06=skipped<DRV-01 HW-03=skipped<DRV-01 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-01 CUDA-LIB=pass CUDA-INIT=skipped<DRV-01 CUDA-04=skipped<DRV-01 CUDA-08=skipped<DRV-01 CUDA-07=skipped<DRV-01 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-01 PERM-02=skipped<DRV-01 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-01 RT-03=skipped<DRV-01 RT-XID=pass RT-05=skipped<DRV-01 RT-04=skipped<DRV-01 RT-ECC=skipped<DRV-01 RT-08=skipped<DRV-01 RT-06=skipped<DRV-01 RT-07=skipped<DRV-01",
    ),
    (
        "akmod-not-built-for-new-fedora-kernel",
        7,
        Some("DRV-01"),
        "HW-01=pass HW-02=skipped<DRV-01 DRV-01=fail DRV-02=skipped DRV-04=pass DRV-05=pass DRV-HUNG=skipped DRV-08=skipped<DRV-01 DRV-06=skipped<DRV-01 HW-03=skipped<DRV-01 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-01 CUDA-LIB=pass CUDA-INIT=skipped<DRV-01 CUDA-04=skipped<DRV-01 CUDA-08=skipped<DRV-01 CUDA-07=skipped<DRV-01 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-01 PERM-02=skipped<DRV-01 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-01 RT-03=skipped<DRV-01 RT-XID=pass RT-05=skipped<DRV-01 RT-04=skipped<DRV-01 RT-ECC=skipped<DRV-01 RT-08=skipped<DRV-01 RT-06=skipped<DRV-01 RT-07=skipped<DRV-01",
    ),
    (
        "dkms-build-failed-after-arch-kernel-update",
        7,
        Some("DRV-01"),
        "HW-01=pass HW-02=skipped<DRV-01 DRV-01=fail DRV-02=skipped DRV-04=pass DRV-05=pass DRV-HUNG=skipped DRV-08=skipped<DRV-01 DRV-06=skipped<DRV-01 HW-03=skipped<DRV-01 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-01 CUDA-LIB=pass CUDA-INIT=skipped<DRV-01 CUDA-04=skipped<DRV-01 CUDA-08=skipped<DRV-01 CUDA-07=skipped<DRV-01 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-01 PERM-02=skipped<DRV-01 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-01 RT-03=skipped<DRV-01 RT-XID=pass RT-05=skipped<DRV-01 RT-04=skipped<DRV-01 RT-ECC=skipped<DRV-01 RT-08=skipped<DRV-01 RT-06=skipped<DRV-01 RT-07=skipped<DRV-01",
    ),
    (
        "dkms-module-only-for-stock-kernel",
        7,
        Some("DRV-01"),
        "HW-01=pass HW-02=skipped<DRV-01 DRV-01=fail DRV-02=skipped DRV-04=pass DRV-05=pass DRV-HUNG=skipped DRV-08=skipped<DRV-01 DRV-06=skipped<DRV-01 HW-03=skipped<DRV-01 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-01 CUDA-LIB=pass CUDA-INIT=skipped<DRV-01 CUDA-04=skipped<DRV-01 CUDA-08=skipped<DRV-01 CUDA-07=skipped<DRV-01 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-01 PERM-02=skipped<DRV-01 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-01 RT-03=skipped<DRV-01 RT-XID=pass RT-05=skipped<DRV-01 RT-04=skipped<DRV-01 RT-ECC=skipped<DRV-01 RT-08=skipped<DRV-01 RT-06=skipped<DRV-01 RT-07=skipped<DRV-01",
    ),
    (
        "blackwell-gpu-old-pytorch",
        7,
        Some("CUDA-07"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=pass CUDA-08=skipped CUDA-07=fail CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "container-without-gpus",
        7,
        Some("CONT-02"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=skipped DRV-HUNG=skipped DRV-08=skipped<CONT-02 DRV-06=info HW-03=skipped<CONT-02 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<CONT-02 CUDA-LIB=skipped<CONT-02 CUDA-INIT=skipped<CONT-02 CUDA-04=skipped<CONT-02 CUDA-08=skipped<CONT-02 CUDA-07=skipped<CONT-02 CONT-01=info CONT-02=fail PERM-01=skipped<CONT-02 PERM-02=skipped<CONT-02 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<CONT-02 RT-03=skipped<CONT-02 RT-XID=skipped<CONT-02 RT-05=skipped<CONT-02 RT-04=skipped<CONT-02 RT-ECC=skipped<CONT-02 RT-08=skipped<CONT-02 RT-06=skipped<CONT-02 RT-07=pass",
    ),
    (
        "cuda-visible-devices-hides-all",
        7,
        Some("ENV-01"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=skipped<ENV-01 CUDA-04=pass CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=fail ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "healthy-container",
        0,
        None,
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=skipped DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=skipped DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=info CONT-02=pass PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=skipped RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "healthy-h200-cloud-vm",
        0,
        None,
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=skipped DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=skipped DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=info CONT-02=pass PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=pass RT-XID=pass RT-05=pass RT-04=pass RT-ECC=pass RT-08=pass RT-06=pass RT-07=pass",
    ),
    (
        "healthy-workstation",
        0,
        None,
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=pass CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "healthy-wsl2",
        0,
        None,
        "HW-01=info HW-02=skipped DRV-01=skipped DRV-02=skipped DRV-04=pass DRV-05=skipped DRV-HUNG=pass DRV-08=pass DRV-06=skipped HW-03=skipped DRV-09=skipped DRV-10=skipped CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=pass CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=skipped PERM-02=skipped WSL-01=pass WSL-02=pass WSL-08=pass ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=skipped RT-05=pass RT-04=skipped RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "no-driver",
        7,
        Some("DRV-01"),
        "HW-01=pass HW-02=skipped<DRV-01 DRV-01=fail DRV-02=skipped DRV-04=pass DRV-05=pass DRV-HUNG=skipped DRV-08=skipped<DRV-01 DRV-06=skipped<DRV-01 HW-03=skipped<DRV-01 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-01 CUDA-LIB=skipped<DRV-01 CUDA-INIT=skipped<DRV-01 CUDA-04=info CUDA-08=skipped<DRV-01 CUDA-07=skipped<DRV-01 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-01 PERM-02=skipped<DRV-01 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-01 RT-03=skipped<DRV-01 RT-XID=pass RT-05=skipped<DRV-01 RT-04=skipped<DRV-01 RT-ECC=skipped<DRV-01 RT-08=skipped<DRV-01 RT-06=skipped<DRV-01 RT-07=pass",
    ),
    (
        "nouveau-bound",
        7,
        Some("DRV-04"),
        "HW-01=pass HW-02=skipped<DRV-04 DRV-01=skipped<DRV-04 DRV-02=skipped DRV-04=fail DRV-05=pass DRV-HUNG=skipped DRV-08=skipped<DRV-04 DRV-06=skipped<DRV-04 HW-03=skipped<DRV-04 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-04 CUDA-LIB=pass CUDA-INIT=skipped<DRV-04 CUDA-04=info CUDA-08=skipped<DRV-04 CUDA-07=skipped<DRV-04 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-04 PERM-02=skipped<DRV-04 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-04 RT-03=skipped<DRV-04 RT-XID=pass RT-05=skipped<DRV-04 RT-04=skipped<DRV-04 RT-ECC=skipped<DRV-04 RT-08=skipped<DRV-04 RT-06=skipped<DRV-04 RT-07=pass",
    ),
    (
        "nvidia-uvm-missing",
        7,
        Some("PERM-01"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=skipped<PERM-01 CUDA-04=pass CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=fail PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "pcie-link-downtrained",
        6,
        None,
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=pass CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=info RT-04=warn RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "row-remapping-failed",
        7,
        Some("RT-03"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=pass CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=fail RT-XID=fail RT-05=pass RT-04=info RT-ECC=warn RT-08=pass RT-06=pass RT-07=pass",
    ),
    (
        "secure-boot-blocks-module",
        7,
        Some("DRV-05"),
        "HW-01=pass HW-02=skipped<DRV-01 DRV-01=skipped<DRV-05 DRV-02=skipped DRV-04=pass DRV-05=fail DRV-HUNG=skipped DRV-08=skipped<DRV-05 DRV-06=skipped<DRV-05 HW-03=skipped<DRV-05 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-05 CUDA-LIB=pass CUDA-INIT=skipped<DRV-05 CUDA-04=info CUDA-08=skipped<DRV-05 CUDA-07=skipped<DRV-05 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-05 PERM-02=skipped<DRV-05 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-05 RT-03=skipped<DRV-05 RT-XID=pass RT-05=skipped<DRV-05 RT-04=skipped<DRV-05 RT-ECC=skipped<DRV-05 RT-08=skipped<DRV-05 RT-06=skipped<DRV-05 RT-07=pass",
    ),
    (
        "torch-newer-cuda-than-driver",
        7,
        Some("CUDA-04"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=fail CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=pass RT-03=skipped RT-XID=pass RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "user-not-in-video-group",
        7,
        Some("PERM-02"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=skipped DRV-08=skipped<PERM-02 DRV-06=pass HW-03=skipped<PERM-02 DRV-09=info DRV-10=skipped CUDA-01=skipped<PERM-02 CUDA-LIB=pass CUDA-INIT=skipped<PERM-02 CUDA-04=info CUDA-08=skipped<PERM-02 CUDA-07=skipped<PERM-02 CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=fail WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<PERM-02 RT-03=skipped<PERM-02 RT-XID=pass RT-05=skipped<PERM-02 RT-04=skipped<PERM-02 RT-ECC=skipped<PERM-02 RT-08=skipped<PERM-02 RT-06=skipped<PERM-02 RT-07=pass",
    ),
    (
        "version-mismatch-after-upgrade",
        7,
        Some("DRV-06"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=skipped DRV-08=skipped<DRV-06 DRV-06=fail HW-03=skipped<DRV-06 DRV-09=info DRV-10=skipped CUDA-01=skipped<DRV-06 CUDA-LIB=pass CUDA-INIT=skipped<DRV-06 CUDA-04=info CUDA-08=skipped<DRV-06 CUDA-07=skipped<DRV-06 CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-06 RT-03=skipped<DRV-06 RT-XID=pass RT-05=skipped<DRV-06 RT-04=skipped<DRV-06 RT-ECC=skipped<DRV-06 RT-08=skipped<DRV-06 RT-06=skipped<DRV-06 RT-07=pass",
    ),
    (
        "wsl-linux-driver-inside",
        7,
        Some("WSL-02"),
        "HW-01=info HW-02=skipped DRV-01=skipped DRV-02=skipped DRV-04=pass DRV-05=skipped DRV-HUNG=skipped DRV-08=skipped<WSL-02 DRV-06=skipped HW-03=skipped<WSL-02 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<WSL-02 CUDA-LIB=pass CUDA-INIT=skipped<WSL-02 CUDA-04=info CUDA-08=skipped<WSL-02 CUDA-07=skipped<WSL-02 CONT-01=pass CONT-02=skipped PERM-01=skipped PERM-02=skipped WSL-01=pass WSL-02=fail WSL-08=pass ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<WSL-02 RT-03=skipped<WSL-02 RT-XID=skipped<WSL-02 RT-05=skipped<WSL-02 RT-04=skipped<WSL-02 RT-ECC=skipped<WSL-02 RT-08=skipped<WSL-02 RT-06=skipped<WSL-02 RT-07=pass",
    ),
    (
        "nouveau-and-no-nvidia-driver",
        7,
        Some("DRV-04"),
        "HW-01=pass HW-02=skipped<DRV-04 DRV-01=skipped<DRV-04 DRV-02=skipped DRV-04=fail DRV-05=info DRV-HUNG=skipped DRV-08=skipped<DRV-04 DRV-06=skipped<DRV-04 HW-03=skipped<DRV-04 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-04 CUDA-LIB=skipped<DRV-04 CUDA-INIT=skipped<DRV-04 CUDA-04=skipped<DRV-04 CUDA-08=skipped<DRV-04 CUDA-07=skipped<DRV-04 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-04 PERM-02=skipped<DRV-04 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-04 RT-03=skipped<DRV-04 RT-XID=pass RT-05=skipped<DRV-04 RT-04=skipped<DRV-04 RT-ECC=skipped<DRV-04 RT-08=skipped<DRV-04 RT-06=skipped<DRV-04 RT-07=pass",
    ),
    (
        "module-missing-after-kernel-update",
        7,
        Some("DRV-01"),
        "HW-01=pass HW-02=skipped<DRV-01 DRV-01=fail DRV-02=skipped DRV-04=pass DRV-05=pass DRV-HUNG=skipped DRV-08=skipped<DRV-01 DRV-06=skipped<DRV-01 HW-03=skipped<DRV-01 DRV-09=skipped DRV-10=skipped CUDA-01=skipped<DRV-01 CUDA-LIB=pass CUDA-INIT=skipped<DRV-01 CUDA-04=skipped<DRV-01 CUDA-08=skipped<DRV-01 CUDA-07=skipped<DRV-01 CONT-01=pass CONT-02=skipped PERM-01=skipped<DRV-01 PERM-02=skipped<DRV-01 WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=skipped<DRV-01 RT-03=skipped<DRV-01 RT-XID=pass RT-05=skipped<DRV-01 RT-04=skipped<DRV-01 RT-ECC=skipped<DRV-01 RT-08=skipped<DRV-01 RT-06=skipped<DRV-01 RT-07=skipped<DRV-01",
    ),
    (
        "gsp-timeout-driver-hung",
        7,
        Some("DRV-HUNG"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=fail DRV-08=skipped DRV-06=pass HW-03=skipped DRV-09=info DRV-10=skipped CUDA-01=skipped CUDA-LIB=pass CUDA-INIT=fail CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=fail RT-03=skipped RT-XID=fail RT-05=skipped RT-04=skipped RT-ECC=skipped RT-08=skipped RT-06=skipped RT-07=skipped",
    ),
    (
        "xid-79-one-of-four-gpus-lost",
        7,
        Some("RT-XID"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=warn DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=fail CUDA-04=pass CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=warn RT-03=skipped RT-XID=fail RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
    (
        "fallen-off-bus-without-xid",
        7,
        Some("RT-XID"),
        "HW-01=pass HW-02=fail DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=fail DRV-09=info DRV-10=skipped CUDA-01=info CUDA-LIB=pass CUDA-INIT=skipped<PERM-01 CUDA-04=skipped CUDA-08=skipped CUDA-07=skipped CONT-01=pass CONT-02=skipped PERM-01=fail PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=warn RT-03=skipped RT-XID=fail RT-05=skipped RT-04=skipped RT-ECC=skipped RT-08=skipped RT-06=skipped RT-07=skipped",
    ),
    (
        "xid-79-fallen-off-bus",
        7,
        Some("RT-LOST"),
        "HW-01=pass HW-02=pass DRV-01=pass DRV-02=info DRV-04=pass DRV-05=pass DRV-HUNG=pass DRV-08=pass DRV-06=pass HW-03=pass DRV-09=info DRV-10=pass CUDA-01=info CUDA-LIB=pass CUDA-INIT=pass CUDA-04=pass CUDA-08=skipped CUDA-07=pass CONT-01=pass CONT-02=skipped PERM-01=pass PERM-02=pass WSL-01=skipped WSL-02=skipped WSL-08=skipped ENV-01=pass ENV-02=pass ENV-03=pass RT-LOST=fail RT-03=skipped RT-XID=fail RT-05=pass RT-04=info RT-ECC=skipped RT-08=pass RT-06=skipped RT-07=pass",
    ),
];

fn summary(r: &diagnose::Report) -> String {
    r.checks
        .iter()
        .map(|c| {
            let v =
                serde_json::to_value(c.verdict).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            format!("{}={v}{}", c.id, c.blocked_by.as_ref().map(|b| format!("<{b}")).unwrap_or_default())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn every_fixture_gives_its_verdicts_and_root_cause() {
    assert!(EXPECTED.len() >= 15);
    for (name, _, root, verdicts) in EXPECTED {
        let cap = CapturedSystem::open(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = diagnose::run(&cap);
        assert!(r.from_capture);
        assert_eq!(r.root_cause.as_deref(), *root, "{name}: root cause");
        let got = summary(&r);
        for (want, have) in verdicts.split(' ').zip(got.split(' ')) {
            assert_eq!(want, have, "{name}: check verdict");
        }
        assert_eq!(verdicts.split(' ').count(), got.split(' ').count(), "{name}: number of checks");
        // Root cause first: nothing else fails unless it is independent evidence of the same fault
        // or a consequence of the root cause, whose own advice is then held back.
        let unblocked_fails: Vec<&str> = r
            .checks
            .iter()
            .filter(|c| c.verdict == Verdict::Fail && c.blocked_by.is_none() && c.explained_by.is_none())
            .map(|c| c.id.as_str())
            .collect();
        assert!(unblocked_fails.len() <= 2, "{name}: {unblocked_fails:?}");
        for c in r.checks.iter().filter(|c| c.explained_by.is_some()) {
            assert_eq!(c.explained_by.as_deref(), *root, "{name}: {} is a consequence of the root cause", c.id);
            assert!(
                c.fixes.iter().all(|f| matches!(f, diagnose::FixStep::Text(_))),
                "{name}: a consequence gives no commands of its own: {:?}",
                c.fixes
            );
        }
        // Issue 38, item 6: a check that could not run is never PASS: without a working driver
        // (NVML failed to open and cuInit did not succeed) "Driver responsiveness" judges nothing.
        if let Some(hung) = r.get("DRV-HUNG")
            && r.get("DRV-08").is_some_and(|c| c.verdict != Verdict::Pass)
            && r.get("CUDA-INIT").is_none_or(|c| c.verdict != Verdict::Pass)
        {
            assert_ne!(
                hung.verdict,
                Verdict::Pass,
                "{name}: DRV-HUNG passed without a working driver: {}",
                hung.summary.en()
            );
        }
        if let Some(root) = root {
            let c = r.get(root).unwrap_or_else(|| panic!("{name}: no {root}"));
            assert!(!c.fixes.is_empty(), "{name}: the root cause comes with a fix");
            assert!(!c.summary.is_empty());
        }
    }
}

#[test]
fn check_cli_on_fixtures_exit_codes_and_fix_texts() {
    let texts = [
        ("healthy-workstation", "No failure found."),
        ("no-driver", "sudo ubuntu-drivers install"),
        ("nouveau-bound", "blacklist nouveau"),
        ("secure-boot-blocks-module", "mokutil --import"),
        ("version-mismatch-after-upgrade", "kernel module 550.54.14, libraries 550.107.02"),
        ("user-not-in-video-group", "sudo usermod -aG video alice"),
        ("nvidia-uvm-missing", "sudo modprobe nvidia-uvm"),
        ("container-without-gpus", "docker run --gpus all"),
        ("wsl-linux-driver-inside", "a Linux NVIDIA driver is installed inside WSL"),
        ("cuda-visible-devices-hides-all", "unset CUDA_VISIBLE_DEVICES"),
        ("torch-newer-cuda-than-driver", "needs CUDA 13.0, but the driver supports only CUDA 12.4"),
        ("xid-79-fallen-off-bus", "Xid 79"),
        ("pcie-link-downtrained", "below its maximum under load"),
        ("blackwell-gpu-old-pytorch", "no kernel image is available"),
        ("row-remapping-failed", "no spare memory rows left"),
    ];
    for (name, code, _, _) in EXPECTED {
        let out = Command::cargo_bin("gpu-doctor-cli")
            .unwrap()
            .args(["check", "--from"])
            .arg(fixture(name))
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(*code), "{name}:\n{s}");
        assert!(!s.contains('\x1b'), "no colour codes");
        if let Some((_, want)) = texts.iter().find(|(n, _)| n == name) {
            assert!(s.contains(want), "{name}: missing {want:?}\n{s}");
        }
        if let Some(root) = EXPECTED.iter().find(|e| e.0 == *name).and_then(|e| e.2) {
            let r = report(name);
            let finding = r.get(root).unwrap().finding.en();
            let first = s.lines().next().unwrap_or_default();
            assert_eq!(first, format!("Root cause: {finding}"), "{name}:\n{s}");
            assert!(!s.contains(root), "{name}: the text names the check by its id:\n{s}");
        }
    }
    let out = Command::cargo_bin("gpu-doctor-cli")
        .unwrap()
        .args(["check", "--json", "--from"])
        .arg(fixture("nouveau-bound"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["root_cause"], "DRV-04");
    assert_eq!(v["checks"][0]["id"], "HW-01");
    // Schema 2: every text in English with its message beside it, and the message renders the
    // same English (docs/messages.md).
    assert_eq!(v["schema"], 2);
    let root = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "DRV-04").unwrap();
    assert_eq!(root["finding_message"]["text"], root["finding"]);
    let m: gpu_doctor::i18n::Message = serde_json::from_value(root["finding_message"].clone()).unwrap();
    assert_eq!(m.en(), root["finding"].as_str().unwrap());
    assert_ne!(m.render(gpu_doctor::i18n::Lang::ZhCn), m.en(), "the finding renders in Chinese from its message");
    let back: gpu_doctor::diagnose::Report = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(back.root().map(|c| c.finding.clone()), Some(m));
}

#[test]
fn broken_captures_give_clear_errors_or_skip_checks() {
    let dir = tempfile::tempdir().unwrap();
    // No capture.json.
    assert!(matches!(CapturedSystem::open(dir.path()), Err(CaptureError::Missing(..))));
    // Garbage.
    std::fs::write(dir.path().join("capture.json"), "{ not json").unwrap();
    assert!(matches!(CapturedSystem::open(dir.path()), Err(CaptureError::Malformed(..))));
    // A future version.
    let text = std::fs::read_to_string(fixture("healthy-workstation").join("capture.json")).unwrap();
    std::fs::write(dir.path().join("capture.json"), text.replace("\"version\": 1", "\"version\": 99")).unwrap();
    let e = CapturedSystem::open(dir.path()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("version 99 is newer") && e.contains("update gpu-doctor"), "{e}");
    let out = Command::cargo_bin("gpu-doctor-cli").unwrap().args(["check", "--from"]).arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("newer than this gpu-doctor understands"));
    // Valid metadata but no files: every file-based check is skipped, nothing crashes.
    std::fs::write(dir.path().join("capture.json"), &text).unwrap();
    let r = diagnose::run(&CapturedSystem::open(dir.path()).unwrap());
    for id in ["DRV-04", "DRV-05"] {
        let c = r.get(id).unwrap_or_else(|| panic!("{id}"));
        assert_eq!(c.verdict, Verdict::Skipped, "{id}: {}", c.summary.en());
        assert!(c.summary.en().contains("evidence missing"), "{id}: {}", c.summary.en());
    }
    // Truncated and damaged files inside a capture.
    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join("capture.json"), &text).unwrap();
    let fs = broken.path().join("fs");
    for (p, content) in [
        ("proc/modules", "\u{0}\u{1}garbage\n\n"),
        ("proc/driver/nvidia/version", "NVRM version: NVIDIA"),
        ("sys/bus/pci/devices/0000:01:00.0/vendor", "zz"),
        ("sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", "\u{6}"),
    ] {
        std::fs::create_dir_all(fs.join(p).parent().unwrap_or(&fs)).unwrap();
        std::fs::write(fs.join(p), content).unwrap();
    }
    let r = diagnose::run(&CapturedSystem::open(broken.path()).unwrap());
    let linux = gpu_doctor::diagnose::checks::CHECKS
        .iter()
        .filter(|d| d.platforms.includes(gpu_doctor::diagnose::system::Platform::Linux))
        .count();
    assert_eq!(r.checks.len(), linux);
}

#[test]
fn capture_paths_cannot_escape_the_capture_directory() {
    let cap = CapturedSystem::open(&fixture("healthy-workstation")).unwrap();
    use gpu_doctor::diagnose::system::SystemView;
    assert!(cap.read("/../../../../etc/passwd").is_none());
    assert!(cap.read("/proc/modules").is_some());
}

/// A copy of fixture `name` in a new temporary directory, to break.
fn copy_fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let to = dir.path().join(name);
    let status = std::process::Command::new("cp").arg("-r").arg(fixture(name)).arg(&to).status();
    assert!(status.is_ok_and(|s| s.success()), "copying {name}");
    (dir, to)
}

#[cfg(unix)]
#[test]
fn a_hostile_capture_never_reads_outside_itself_and_never_hangs() {
    use std::time::{Duration, Instant};
    let check = |dir: &Path| {
        let started = Instant::now();
        let out = Command::cargo_bin("gpu-doctor-cli")
            .unwrap()
            .args(["check", "--from"])
            .arg(dir)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // A file linked to the support engineer's /etc/passwd: refused and named, never printed.
    let (_t, cap) = copy_fixture("healthy-workstation");
    let version = cap.join("fs/proc/driver/nvidia/version");
    std::fs::remove_file(&version).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &version).unwrap();
    // A file linked to /dev/zero is outside too; a FIFO inside the capture: refused at once.
    let modules = cap.join("fs/proc/modules");
    std::fs::remove_file(&modules).unwrap();
    let c = std::ffi::CString::new(modules.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { mkfifo(c.as_ptr(), 0o600) }, 0);
    let os = cap.join("fs/etc/os-release");
    let _ = std::fs::remove_file(&os);
    std::fs::create_dir_all(os.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &os).unwrap();
    let (code, out, err) = check(&cap);
    assert!(!out.contains("root:") && !out.contains("/bin/bash"), "{out}");
    assert!(out.contains("Not read from the capture (3 entries"), "{out}\n{err}");
    assert!(out.contains("/proc/driver/nvidia/version: points outside"), "{out}");
    assert!(out.contains("/etc/os-release: points outside"), "{out}");
    assert!(out.contains("/proc/modules: not a regular file (a FIFO)"), "{out}");
    assert!(matches!(code, Some(0 | 6 | 7)), "{code:?}: {out}");
    assert!(!out.contains("NVIDIA kernel module: nvidia is loaded"), "no module list, no claim: {out}");
    let json =
        Command::cargo_bin("gpu-doctor-cli").unwrap().args(["check", "--json", "--from"]).arg(&cap).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["refused"].as_array().map(Vec::len), Some(3), "{v}");

    // `fs` itself a link to `/`: this machine must not be checked as if it were the user's.
    let (_t, cap) = copy_fixture("healthy-workstation");
    std::fs::remove_dir_all(cap.join("fs")).unwrap();
    std::os::unix::fs::symlink("/", cap.join("fs")).unwrap();
    let (_, out, _) = check(&cap);
    assert!(out.contains("fs: points outside"), "{out}");
    assert!(out.contains("evidence missing") || out.contains("not readable"), "{out}");

    // capture.json a FIFO: a clear error at once, not a hang.
    let (_t, cap) = copy_fixture("healthy-workstation");
    std::fs::remove_file(cap.join("capture.json")).unwrap();
    let c = std::ffi::CString::new(cap.join("capture.json").to_string_lossy().as_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { mkfifo(c.as_ptr(), 0o600) }, 0);
    let (code, _, err) = check(&cap);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("not a regular file (a FIFO)"), "{err}");
}

#[cfg(unix)]
unsafe extern "C" {
    fn mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
}

#[test]
fn a_capture_listing_hundreds_of_thousands_of_homes_is_checked_in_seconds() {
    // Was 14 s for 200,000 names (20 file lookups each): the search is bounded and linear.
    let (_t, cap) = copy_fixture("healthy-workstation");
    let file = cap.join("capture.json");
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let names: Vec<String> = (0..300_000).map(|i| format!("user{i:06}")).collect();
    doc["meta"]["listings"]["/home"] = serde_json::json!(names);
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    let started = std::time::Instant::now();
    let out = Command::cargo_bin("gpu-doctor-cli").unwrap().args(["check", "--from"]).arg(&cap).output().unwrap();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(took < std::time::Duration::from_secs(8), "took {took:?}");
}

#[test]
fn repeated_xid_lines_are_summarised_not_printed_one_by_one() {
    let (_t, cap) = copy_fixture("xid-79-fallen-off-bus");
    let file = cap.join("capture.json");
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut lines: Vec<String> = (0..200_000)
        .map(|i| format!("NVRM: Xid (PCI:0000:01:00): 79, pid={i}, name=python, GPU has fallen off the bus."))
        .collect();
    lines.push("NVRM: Xid (PCI:0000:01:00): 13, pid=7, name=python, Graphics Exception".into());
    doc["meta"]["kernel_log"] = serde_json::json!({ "lines": lines });
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = Command::cargo_bin("gpu-doctor-cli").unwrap().args(["check", "--from"]).arg(&cap).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.stdout.len() < 64 * 1024, "{} bytes of output", out.stdout.len());
    let json =
        Command::cargo_bin("gpu-doctor-cli").unwrap().args(["check", "--json", "--from"]).arg(&cap).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let xid = v["checks"].as_array().and_then(|a| a.iter().find(|c| c["id"] == "RT-XID")).cloned().unwrap_or_default();
    let evidence: Vec<&str> =
        xid["evidence"].as_array().map(|a| a.iter().filter_map(|e| e.as_str()).collect()).unwrap_or_default();
    assert_eq!(evidence.len(), 3, "{evidence:?}\n{text}");
    assert!(evidence[2].starts_with("NVIDIA's Xid catalogue for Xid 79: restart the machine"), "{}", evidence[2]);
    assert!(
        evidence[0]
            .starts_with("Xid 79 on 0000:01:00 logged 200000 times; first: NVRM: Xid (PCI:0000:01:00): 79, pid=0,"),
        "{}",
        evidence[0]
    );
    assert!(evidence[0].contains("last: NVRM: Xid (PCI:0000:01:00): 79, pid=199999,"), "{}", evidence[0]);
}

#[test]
fn capture_of_this_machine_reads_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("cap");
    let cli = || {
        let mut c = Command::cargo_bin("gpu-doctor-cli").unwrap();
        c.env("GPU_DOCTOR_NVML_LIB", "/nonexistent/libnvidia-ml.so.1");
        c
    };
    let out = cli().args(["capture", "--out"]).arg(&out_dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let live = cli().args(["check", "--json"]).output().unwrap();
    let from = cli().args(["check", "--json", "--from"]).arg(&out_dir).output().unwrap();
    let strip = |b: &[u8]| {
        let mut v: serde_json::Value = serde_json::from_slice(b).unwrap();
        v["from_capture"] = serde_json::Value::Null;
        // (Which file the checks read is what a capture adds: the rest is the same.)
        if let Some(o) = v.as_object_mut() {
            o.remove("origin");
        }
        v
    };
    assert_eq!(strip(&live.stdout), strip(&from.stdout), "same verdicts from the capture as live");
    // A second capture into the same directory is refused: nothing is overwritten.
    let again = cli().args(["capture", "--out"]).arg(&out_dir).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));
    // One file to send: the archive alone, and next to a directory; check reads it back.
    let file = dir.path().join("cap.tar.gz");
    let out = cli().args(["capture", "--archive"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("check --from"));
    let from_file = cli().args(["check", "--json", "--from"]).arg(&file).output().unwrap();
    assert_eq!(strip(&live.stdout), strip(&from_file.stdout), "same verdicts from the archive as live");
    let both = dir.path().join("both.tar.gz");
    let out =
        cli().args(["capture", "--out"]).arg(dir.path().join("cap2")).arg("--archive").arg(&both).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join("cap2/capture.json").is_file() && both.is_file());
    // An existing file is never overwritten.
    let before = std::fs::read(&file).unwrap();
    let again = cli().args(["capture", "--archive"]).arg(&file).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // A file that is no capture archive is not mistaken for one.
    let junk = dir.path().join("junk.tar.gz");
    std::fs::write(&junk, "not gzip").unwrap();
    let out = cli().args(["check", "--from"]).arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
}

mod parsers {
    use super::parse;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn parsers_never_panic(s in ".{0,400}", b in proptest::collection::vec(any::<u8>(), 0..16)) {
            let _ = parse::driver_version(&s);
            let _ = parse::loaded_modules(&s);
            let _ = parse::char_majors(&s);
            let _ = parse::secure_boot(&b);
            let _ = parse::library_version(&s);
            let _ = parse::torch_cuda(&s);
            let _ = parse::torch_version(&s);
            let _ = gpu_doctor::knowledge::cuda::cuda_min_driver(&s);
            let _ = parse::xids(std::slice::from_ref(&s));
            let _ = parse::cuda_visible(&s, &[(0, "GPU-abc".into())]);
            let _ = gpu_doctor::knowledge::cmp_version(&s, "550.54.15");
        }

        /// The capture reader on damaged captures: any byte of a real capture.json changed,
        /// truncated or the value types swapped gives an error or a checklist, never a panic.
        #[test]
        fn the_capture_reader_never_panics_on_damaged_captures(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..12),
            cut in any::<prop::sample::Index>(),
            parse_it in any::<bool>(),
        ) {
            let src = super::fixture("container-lost-gpus-a10-t4");
            let mut json = std::fs::read(src.join("capture.json")).unwrap();
            for (i, b) in &edits {
                let at = i.index(json.len());
                json[at] = *b;
            }
            if !parse_it {
                let keep = cut.index(json.len());
                json.truncate(keep.max(1));
            }
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("capture.json"), &json).unwrap();
            if let Ok(cap) = gpu_doctor::diagnose::system::CapturedSystem::open(dir.path()) {
                let r = gpu_doctor::diagnose::run(&cap);
                prop_assert!(!r.checks.is_empty());
            }
        }

        #[test]
        fn cuda_visible_never_shows_more_than_exist(entries in proptest::collection::vec(0u32..6, 0..6)) {
            let gpus = vec![(0, "GPU-a".to_string()), (1, "GPU-b".to_string()), (2, "GPU-c".to_string())];
            let value = entries.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
            let v = parse::cuda_visible(&value, &gpus);
            prop_assert!(v.gpus.len() <= 3);
            // Everything before the first invalid entry is kept, in order.
            let valid_prefix: Vec<u32> = entries.iter().copied().take_while(|e| *e < 3).collect();
            let mut dedup = Vec::new();
            for e in valid_prefix { if !dedup.contains(&e) { dedup.push(e); } }
            prop_assert_eq!(v.gpus, dedup);
        }

        #[test]
        fn driver_version_roundtrip(a in 300u32..999, b in 0u32..300, c in 0u32..99) {
            let v = format!("{a}.{b}.{c:02}");
            let line = format!("NVRM version: NVIDIA UNIX x86_64 Kernel Module  {v}  Thu Apr  3 01:14:19 UTC 2025\n");
            prop_assert_eq!(parse::driver_version(&line), Some((v, false)));
        }
    }
}

#[test]
fn a_failing_cuinit_alone_is_the_root_cause_with_its_error_name() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("healthy-workstation");
    let text = std::fs::read_to_string(src.join("capture.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["meta"]["cuda"]["init_code"] = serde_json::json!(34);
    std::fs::write(dir.path().join("capture.json"), v.to_string()).unwrap();
    let r = diagnose::run(&CapturedSystem::open(dir.path()).unwrap());
    assert_eq!(r.root_cause.as_deref(), Some("CUDA-INIT"));
    let c = r.get("CUDA-INIT").expect("no CUDA-INIT");
    assert!(c.summary.en().contains("CUDA_ERROR_STUB_LIBRARY (34)"), "{}", c.summary.en());
    assert!(c.fixes[0].en().contains("LD_LIBRARY_PATH"), "{:?}", c.fixes);
    // A capture from before the probe existed: skipped, not failed.
    v["meta"].as_object_mut().map(|m| m.remove("cuda"));
    std::fs::write(dir.path().join("capture.json"), v.to_string()).unwrap();
    let r = diagnose::run(&CapturedSystem::open(dir.path()).unwrap());
    assert_eq!(r.get("CUDA-INIT").map(|c| c.verdict), Some(Verdict::Skipped));
    assert_eq!(r.root_cause, None);
}

/// Fixtures written from a public bug report or forum thread, whose address the capture records.
const FROM_PUBLIC_THREADS: &[&str] = &[
    "wsl-nvidia-utils-shadows-nvml",
    "wsl-libnvidia-compute-470-inside",
    "wsl-lib-folder-off-the-loader-path",
    "mig-on-without-instances-a100-sxm",
    "mig-on-without-instances-cuda-no-device",
    "container-lost-gpus-after-daemon-reload",
    "container-lost-gpus-a10-t4",
    "lockdown-refuses-unsigned-module",
    "secure-boot-key-rejected-dkms",
    "pcie-aer-fatal-errors-no-xid",
    "torch-cu121-in-project-venv-driver-470",
    "torch-cu121-container-driver-450",
    "torch-cu121-conda-env-elsewhere-driver-470",
    "xid-79-after-pcie-surprise-down",
    "rminitadapter-failed-gsp-no-xid",
    "gsp-error-then-rpc-timeout-driver-hung",
    "nvidia-smi-stuck-in-d-state",
    "run-installer-module-for-old-kernel",
    "akmod-not-built-for-new-fedora-kernel",
    "dkms-build-failed-after-arch-kernel-update",
    "dkms-module-only-for-stock-kernel",
    "module-missing-after-kernel-update",
    "xid-79-one-of-four-gpus-lost",
    "fallen-off-bus-without-xid",
    "gsp-timeout-driver-hung",
    "nouveau-and-no-nvidia-driver",
];

#[test]
fn a_gpu_that_fell_off_the_bus_is_the_root_cause_and_its_symptoms_are_its_consequences() {
    // (fixture, the failures it explains): before, the first of these in list order was named
    // the root cause, with advice (reload a module, reinstall CUDA) wrong for a hardware fault.
    let cases: [(&str, &[&str]); 3] = [
        ("xid-79-one-of-four-gpus-lost", &["HW-03", "CUDA-INIT"]),
        ("fallen-off-bus-without-xid", &["HW-02", "HW-03", "PERM-01"]),
        ("xid-79-fallen-off-bus", &["RT-XID"]),
    ];
    for (name, consequences) in cases {
        let r = report(name);
        let got: Vec<&str> = r.checks.iter().filter(|c| c.explained_by.is_some()).map(|c| c.id.as_str()).collect();
        assert_eq!(got, consequences, "{name}");
        let root = r.root().unwrap_or_else(|| panic!("{name}: no root cause"));
        assert!(root.finding.en().contains("fell off"), "{name}: {}", root.finding.en());
        let text = gpu_doctor::present::checklist::render_text(&r, gpu_doctor::i18n::Lang::En);
        assert!(text.lines().any(|l| l.starts_with("  It also causes: ")), "{name}:\n{text}");
        assert!(!text.contains("modprobe") && !text.contains("reinstall"), "{name}: symptom advice:\n{text}");
    }
    for name in FROM_PUBLIC_THREADS {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(fixture(name).join("capture.json")).unwrap()).unwrap();
        let source = doc.get("source").and_then(|s| s.as_str()).unwrap_or_default();
        assert!(source.starts_with("https://"), "{name} records the thread it comes from: {source:?}");
    }
}

#[test]
fn a_driver_call_that_does_not_return_is_a_hung_driver_not_a_missing_one() {
    let r = report("gsp-timeout-driver-hung");
    let root = r.root().expect("a root cause");
    assert_eq!(root.id, "DRV-HUNG");
    assert_eq!(
        root.finding.en(),
        "The NVIDIA driver is not responding: the GPU's firmware (GSP) stopped answering the driver"
    );
    assert!(root.evidence.iter().any(|e| e.en().contains("Timeout waiting for RPC from GSP")), "{:?}", root.evidence);
    let commands: Vec<String> = root
        .fixes
        .iter()
        .filter_map(|f| match f {
            diagnose::FixStep::Command(c) => Some(c.clone()),
            diagnose::FixStep::Text(_) => None,
        })
        .collect();
    assert_eq!(commands, ["sudo dmesg --ctime > nvidia-hang-dmesg.txt", "sudo nvidia-smi --gpu-reset"]);
    let consequences: Vec<&str> =
        r.checks.iter().filter(|c| c.explained_by.as_deref() == Some("DRV-HUNG")).map(|c| c.id.as_str()).collect();
    assert_eq!(consequences, ["CUDA-INIT", "RT-LOST", "RT-XID"]);
    let text = gpu_doctor::present::checklist::render_text(&r, gpu_doctor::i18n::Lang::En);
    assert!(!text.to_lowercase().contains("install the nvidia driver"), "a hung driver is not a missing one:\n{text}");
}

#[test]
fn nouveau_on_a_machine_without_any_nvidia_driver_is_fixed_by_installing_one_not_by_a_blacklist() {
    let r = report("nouveau-and-no-nvidia-driver");
    let root = r.root().expect("a root cause");
    assert!(root.finding.en().starts_with("The NVIDIA driver is not installed"), "{}", root.finding.en());
    let text = gpu_doctor::present::checklist::render_text(&r, gpu_doctor::i18n::Lang::En);
    assert!(text.contains("sudo apt install nvidia-driver"), "{text}");
    assert!(
        !text.contains("blacklist nouveau\n") && !text.contains("> /etc/modprobe.d"),
        "no blacklist before a driver exists:\n{text}"
    );
    // Secure Boot has no module to block yet: not a failure.
    assert_ne!(r.get("DRV-05").map(|c| c.verdict), Some(Verdict::Fail));
    // With the NVIDIA packages installed, nouveau holding the GPU still gets the blacklist.
    let with_driver = gpu_doctor::present::checklist::render_text(&report("nouveau-bound"), gpu_doctor::i18n::Lang::En);
    assert!(with_driver.contains("/etc/modprobe.d/blacklist-nouveau.conf"), "{with_driver}");
}

#[test]
fn a_driver_without_a_module_for_the_running_kernel_is_told_to_rebuild_it() {
    let r = report("module-missing-after-kernel-update");
    let root = r.root().expect("a root cause");
    assert_eq!(root.id, "DRV-01");
    assert_eq!(root.finding.en(), "The NVIDIA driver was not built for the running kernel (5.10.0-21-cloud-amd64)");
    let text = gpu_doctor::present::checklist::render_text(&r, gpu_doctor::i18n::Lang::En);
    for want in ["sudo apt install linux-headers-$(uname -r)", "sudo dkms autoinstall", "sudo reboot"] {
        assert!(text.contains(want), "missing {want:?}:\n{text}");
    }
    // A machine whose module is loaded is not told so.
    let healthy = report("version-mismatch-after-upgrade");
    assert_ne!(healthy.get("DRV-01").map(|c| c.finding.en()), Some(root.finding.en()));
}

/// Every command of a check's fixes.
fn commands(c: &diagnose::Check) -> Vec<String> {
    c.fixes
        .iter()
        .filter_map(|f| match f {
            diagnose::FixStep::Command(c) => Some(c.clone()),
            diagnose::FixStep::Text(_) => None,
        })
        .collect()
}

#[test]
fn a_linux_driver_inside_wsl_is_found_by_what_a_normal_program_loads_not_by_the_apps_fallback() {
    // Before, only libcuda.so.1's first match was judged: a Linux libnvidia-ml.so.1 in front of the
    // Windows one passed, and a WSL folder missing from the loader's path was not seen at all.
    for (name, finding) in [
        ("wsl-nvidia-utils-shadows-nvml", "A Linux NVIDIA driver inside WSL shadows the Windows one"),
        ("wsl-libnvidia-compute-470-inside", "A Linux NVIDIA driver inside WSL shadows the Windows one"),
        ("wsl-lib-folder-off-the-loader-path", "/usr/lib/wsl/lib is missing from the library path"),
    ] {
        let r = report(name);
        let root = r.root().unwrap_or_else(|| panic!("{name}: no root cause"));
        assert_eq!((root.id.as_str(), root.finding.en().as_str()), ("WSL-02", finding), "{name}");
        let lines = root.evidence.iter().filter(|e| e.en().contains(" -> ")).count();
        assert!(lines >= 2, "{name}: every candidate is evidence: {:?}", root.evidence);
    }
    let root = report("wsl-nvidia-utils-shadows-nvml").root().cloned().expect("root");
    assert!(root.summary.en().contains("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"), "{}", root.summary.en());
    assert!(commands(&root).iter().any(|c| c.starts_with("sudo apt-get remove --purge")), "{:?}", root.fixes);
    let root = report("wsl-lib-folder-off-the-loader-path").root().cloned().expect("root");
    assert_eq!(commands(&root), ["echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf", "sudo ldconfig"]);
}

#[test]
fn mig_without_instances_is_the_root_cause_with_how_to_create_them_or_turn_mig_off() {
    for name in ["mig-on-without-instances-a100-sxm", "mig-on-without-instances-cuda-no-device"] {
        let r = report(name);
        let root = r.root().unwrap_or_else(|| panic!("{name}: no root cause"));
        assert_eq!(root.id, "RT-06", "{name}");
        assert!(root.finding.en().starts_with("MIG is on with no instances"), "{name}: {}", root.finding.en());
        let cmds = commands(root);
        assert!(
            cmds.iter().any(|c| c.ends_with("-cgi 0 -C")) && cmds.iter().any(|c| c.ends_with("-mig 0")),
            "{cmds:?}"
        );
    }
    let r = report("mig-on-without-instances-cuda-no-device");
    let cuda = r.checks.iter().find(|c| c.id == "CUDA-INIT").expect("CUDA-INIT");
    assert_eq!((cuda.verdict, cuda.explained_by.as_deref()), (Verdict::Fail, Some("RT-06")));
}

#[test]
fn a_container_whose_device_files_cannot_be_opened_lost_its_gpus() {
    for name in ["container-lost-gpus-after-daemon-reload", "container-lost-gpus-a10-t4"] {
        let r = report(name);
        let root = r.root().unwrap_or_else(|| panic!("{name}: no root cause"));
        assert_eq!(
            (root.id.as_str(), root.finding.en().as_str()),
            ("CONT-02", "This container lost access to the GPU")
        );
        assert!(root.evidence.iter().any(|e| e.en().contains("Operation not permitted")), "{:?}", root.evidence);
        let text = gpu_doctor::present::checklist::render_text(&r, gpu_doctor::i18n::Lang::En);
        let head: String = text.lines().take_while(|l| !l.is_empty()).collect::<Vec<_>>().join("\n");
        assert!(head.contains("restart (or recreate) this container"), "{head}");
        // Advice that cannot work inside the container is not given first.
        assert!(!head.contains("dmesg") && !head.contains("install the NVIDIA driver"), "{head}");
    }
}

#[test]
fn kernel_lockdown_refusing_the_module_is_named_without_the_firmware_variable() {
    let r = report("lockdown-refuses-unsigned-module");
    let root = r.root().expect("a root cause");
    assert_eq!(root.id, "DRV-05");
    assert!(
        root.evidence.iter().any(|e| e.en().contains("unsigned module loading is restricted")),
        "{:?}",
        root.evidence
    );
    assert_eq!(report("secure-boot-key-rejected-dkms").root_cause.as_deref(), Some("DRV-05"));
}

#[test]
fn driver_and_pcie_errors_without_an_xid_are_quoted_not_called_clean() {
    // Before: "no Xid errors logged since boot" while the log held RmInitAdapter and AER lines.
    for (name, quoted) in [
        ("pcie-aer-fatal-errors-no-xid", "PCIe Bus Error: severity=Uncorrected (Fatal)"),
        ("rminitadapter-failed-gsp-no-xid", "RmInitAdapter failed!"),
    ] {
        let r = report(name);
        let xid = r.checks.iter().find(|c| c.id == "RT-XID").expect("RT-XID");
        assert_eq!(xid.verdict, Verdict::Warn, "{name}: {}", xid.summary.en());
        assert!(xid.evidence.iter().any(|e| e.en().contains(quoted)), "{name}: {:?}", xid.evidence);
    }
    // Unreadable: "unknown", with the command that reads it.
    let r = report("nvidia-smi-stuck-in-d-state");
    let xid = r.checks.iter().find(|c| c.id == "RT-XID").expect("RT-XID");
    assert!(
        xid.summary.en().starts_with("unknown: the kernel log is not readable by this user ("),
        "{}",
        xid.summary.en()
    );
    assert!(
        xid.fixes.iter().any(|f| matches!(f, diagnose::FixStep::Command(c) if c.starts_with("sudo dmesg"))),
        "{:?}",
        xid.fixes
    );
    assert_eq!(r.root_cause.as_deref(), Some("DRV-HUNG"));
}

#[test]
fn pytorch_in_environments_that_are_not_activated_is_found_and_the_wheel_suggested_exists() {
    // Before, these installs were invisible (a project venv under the working directory, a conda
    // environment listed in ~/.conda/environments.txt, a container's dist-packages with PATH).
    for (name, wheel) in [
        (
            "torch-cu121-in-project-venv-driver-470",
            "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu118",
        ),
        (
            "torch-cu121-conda-env-elsewhere-driver-470",
            "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu118",
        ),
        // Python 3.10 in that container: cu110's torch 1.7.1 has no wheel for it (issue 53, item
        // 22); cu102's 1.12.1 has, and the driver (CUDA 11.0) runs it.
        (
            "torch-cu121-container-driver-450",
            "pip install torch==1.12.1 --index-url https://download.pytorch.org/whl/cu102",
        ),
    ] {
        let r = report(name);
        let root = r.root().unwrap_or_else(|| panic!("{name}: no root cause"));
        assert_eq!(root.id, "CUDA-04", "{name}");
        assert!(commands(root).iter().any(|c| c == wheel), "{name}: {:?}", root.fixes);
        assert!(root.explanation.en().contains("525.60.13"), "minor-version compatibility: {}", root.explanation.en());
    }
}

#[test]
fn no_fixture_is_given_a_wheel_index_that_does_not_exist_or_symptom_advice_for_a_hardware_fault() {
    for (name, ..) in EXPECTED {
        let r = report(name);
        for c in &r.checks {
            for cmd in commands(c) {
                if let Some(tag) = cmd.split("download.pytorch.org/whl/").nth(1) {
                    assert!(
                        gpu_doctor::knowledge::frameworks::TORCH_WHEELS.iter().any(|w| w.0 == tag.trim()),
                        "{name} {}: {cmd}",
                        c.id
                    );
                }
            }
        }
        if matches!(r.root_cause.as_deref(), Some("RT-LOST" | "RT-XID")) {
            let root = r.root().expect("root");
            let all: String = root.fixes.iter().map(|f| format!("{f:?}")).collect();
            assert!(!all.contains("modprobe") && !all.contains("rmmod"), "{name}: {all}");
        }
    }
}

/// Issue 18: Windows captures from public threads (each capture's `source` names its thread):
/// (fixture, root cause, a check and the finding it must give).
const WINDOWS: &[(&str, Option<&str>, &str, &str)] = &[
    (
        "win-code43-laptop-dgpu-after-eco-mode",
        Some("WIN-ADAPTER"),
        "WIN-ADAPTER",
        "Windows stopped the NVIDIA GPU (Code 43)",
    ),
    ("win-code43-rtx3060-mini-pc", Some("WIN-ADAPTER"), "WIN-ADAPTER", "Windows stopped the NVIDIA GPU (Code 43)"),
    (
        "win-basic-display-adapter-after-silent-install",
        Some("WIN-ADAPTER"),
        "WIN-ADAPTER",
        "The NVIDIA driver is not installed",
    ),
    ("win-code28-p106-no-driver", Some("WIN-ADAPTER"), "WIN-ADAPTER", "No driver is installed for the NVIDIA GPU"),
    ("win-code31-dgpu-after-eco-reboot", Some("WIN-ADAPTER"), "WIN-ADAPTER", "The NVIDIA GPU does not work (Code 31)"),
    ("win-code10-p106-vt-d", Some("WIN-ADAPTER"), "WIN-ADAPTER", "The NVIDIA GPU does not work (Code 10)"),
    ("win-stale-nvsmi-nvml-after-update", None, "WIN-04", "An nvml.dll from another driver is left on this machine"),
    (
        "win-torch-cpu-wheel-conda-laptop",
        Some("WIN-TORCH"),
        "WIN-TORCH",
        "PyTorch is a CPU-only build: it cannot use the GPU",
    ),
    (
        "win-comfyui-portable-torch-not-compiled-with-cuda",
        Some("WIN-TORCH"),
        "WIN-TORCH",
        "PyTorch is a CPU-only build: it cannot use the GPU",
    ),
    (
        "win-tdr-launch-timeout-tesla-m40-wddm",
        Some("WIN-TDR"),
        "WIN-TDR",
        "Windows reset the NVIDIA driver 4 time(s) this week",
    ),
    (
        "win-hybrid-directml-on-intel-igpu",
        None,
        "WIN-GPUPREF",
        "Python's DirectML and Vulkan work runs on the integrated GPU",
    ),
    ("win-healthy-rtx4060-wddm", None, "WIN-ADAPTER", "Windows sees the NVIDIA GPU and its driver works"),
    ("win-healthy-tesla-p4-tcc-server", None, "WIN-02", "The driver model is set"),
    ("win-wsl-build-before-21h2", None, "WIN-WSL", "This Windows is too old for CUDA in WSL"),
    (
        "win-cuda-toolkit-11.3-newer-than-driver",
        None,
        "WIN-CUDAPATH",
        "The CUDA toolkit (11.3) is newer than the driver",
    ),
    ("win-dch-driver-standard-installer-refused", None, "WIN-03", "NVIDIA driver 431.60 is installed"),
    ("win-optimus-dgpu-asleep-d3", None, "WIN-ADAPTER", "Windows sees the NVIDIA GPU and its driver works"),
    (
        "win-old-driver-packages-in-driver-store",
        None,
        "WIN-04",
        "nvml.dll is installed; older driver packages are kept",
    ),
];

/// Ids of checks that read Linux-only sources (sysfs, kernel modules, device files, containers,
/// the loader path, the kernel log).
const LINUX_ONLY: &[&str] = &[
    "HW-01", "HW-02", "HW-03", "DRV-01", "DRV-02", "DRV-04", "DRV-05", "DRV-06", "DRV-09", "DRV-10", "CUDA-LIB",
    "CUDA-04", "CUDA-07", "CONT-01", "CONT-02", "PERM-01", "PERM-02", "WSL-01", "WSL-02", "WSL-08", "ENV-03", "RT-XID",
];

#[test]
fn windows_captures_from_public_threads_get_their_root_cause_and_no_linux_check_or_advice() {
    assert!(WINDOWS.len() >= 10);
    for (name, root, id, finding) in WINDOWS {
        let r = report(name);
        assert_eq!(r.root_cause.as_deref(), *root, "{name}: root cause ({})", summary(&r));
        let c = r.get(id).unwrap_or_else(|| panic!("{name}: no {id}"));
        assert_eq!(c.finding.en(), *finding, "{name}: {id}: {}", c.summary.en());
        for c in &r.checks {
            assert!(!LINUX_ONLY.contains(&c.id.as_str()), "{name}: a Linux-only check ran: {}", c.id);
            for cmd in commands(c) {
                for linux in ["sudo ", "modprobe", "apt ", "/usr/", "/dev/", "systemctl"] {
                    assert!(!cmd.contains(linux), "{name}: {}: Linux advice on Windows: {cmd}", c.id);
                }
            }
        }
    }
    // The fixes name this machine's things: the ComfyUI folder's own interpreter, the disabled
    // device's id, a wheel the driver runs.
    let comfy = report("win-comfyui-portable-torch-not-compiled-with-cuda");
    let fix = commands(comfy.get("WIN-TORCH").unwrap_or_else(|| panic!("no WIN-TORCH")));
    assert_eq!(
        fix,
        [
            "\"C:\\Users\\user\\Downloads\\ComfyUI_windows_portable\\python_embeded\\python.exe\" -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu126"
        ]
    );
    // Code 43: the driver's consequences (no NVML, no CUDA) are explained by it, not separate failures.
    let code43 = report("win-code43-rtx3060-mini-pc");
    assert_eq!(code43.get("DRV-08").and_then(|c| c.explained_by.clone()).as_deref(), Some("WIN-ADAPTER"));
    // The driver version reads in NVIDIA's numbering.
    let healthy = report("win-healthy-rtx4060-wddm");
    assert!(healthy.get("WIN-ADAPTER").is_some_and(|c| c.summary.en().contains("537.70 (31.0.15.3770)")));
    // The package type, and what a package of the other type does.
    let dch = report("win-dch-driver-standard-installer-refused");
    let c = dch.get("WIN-03").unwrap_or_else(|| panic!("no WIN-03"));
    assert!(
        c.summary.en().contains("(DCH package)")
            && c.explanation.en().contains("not compatible with this version of Windows")
    );
    // A sleeping dGPU is normal and left asleep: no driver call, no failure, and the 0 % explained.
    let asleep = report("win-optimus-dgpu-asleep-d3");
    assert!(
        asleep.checks.iter().all(|c| c.verdict != Verdict::Fail && c.verdict != Verdict::Warn),
        "{}",
        summary(&asleep)
    );
    let adapter = asleep.get("WIN-ADAPTER").unwrap_or_else(|| panic!("no WIN-ADAPTER"));
    assert!(
        adapter.evidence.iter().any(|e| e.en().contains("power state D3 (asleep)"))
            && adapter.explanation.en().contains("0 %")
    );
    assert!(asleep.get("DRV-08").is_some_and(|c| c.summary.en().contains("power state D3")));
    assert_eq!(asleep.get("DRV-HUNG").map(|c| c.verdict), Some(Verdict::Skipped));
    // Old packages in the driver store are kept for rollback: listed, never deleted with `del`.
    let store = report("win-old-driver-packages-in-driver-store");
    let c = store.get("WIN-04").unwrap_or_else(|| panic!("no WIN-04"));
    assert_eq!(commands(c), ["pnputil /enum-drivers /class Display"]);
    assert!(c.summary.en().contains("472.98"));
}

/// The power plan, judged on a healthy Windows capture with its plan and power mode changed.
#[test]
fn windows_power_saver_plan_and_efficiency_mode_are_named_with_the_command_that_changes_them() {
    let judge = |scheme: &str, mode: Option<&str>| {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let src = fixture("win-healthy-rtx4060-wddm").join("capture.json");
        let text = std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{e}"));
        let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
        doc["meta"]["windows"]["power_scheme"] = scheme.into();
        if let Some(m) = mode {
            doc["meta"]["windows"]["power_mode_ac"] = m.into();
        }
        std::fs::write(dir.path().join("capture.json"), doc.to_string()).unwrap_or_else(|e| panic!("{e}"));
        let r = diagnose::run(&CapturedSystem::open(dir.path()).unwrap_or_else(|e| panic!("{e}")));
        r.get("WIN-POWER").cloned().unwrap_or_else(|| panic!("no WIN-POWER"))
    };
    let saver = judge("a1841308-3541-4fab-bc81-f71556f20b4a", None);
    assert_eq!(saver.verdict, Verdict::Warn);
    assert_eq!(commands(&saver), ["powercfg /setactive SCHEME_BALANCED"]);
    let efficiency = judge("381b4222-f694-41f0-9685-ff5bb260df2e", Some("961cc777-2547-4f9d-8174-7d86181b8a7a"));
    assert_eq!(efficiency.verdict, Verdict::Warn);
    assert!(efficiency.summary.en().contains("Best power efficiency"));
    let balanced = judge("381b4222-f694-41f0-9685-ff5bb260df2e", Some("00000000-0000-0000-0000-000000000000"));
    assert_eq!((balanced.verdict, balanced.summary.en().as_str()), (Verdict::Pass, "Balanced; Balanced (power mode)"));
    let custom = judge("11111111-2222-3333-4444-555555555555", None);
    assert_eq!(custom.verdict, Verdict::Pass);
    assert!(custom.evidence[0].en().contains("a custom plan"));
}

/// The differential of "the NVIDIA kernel module is not loaded" (docs/diagnosis.md): on machines
/// written from public threads (tests/fixtures/wild, measured before these rules existed) and the
/// older fixtures, the root cause names the cause the facts decide, with that cause's fix; when
/// the facts decide nothing, the candidates come each with the command that tells.
#[test]
fn the_module_differential_names_the_cause_the_facts_decide() {
    use gpu_doctor::diagnose::differential::CauseFinding;
    let decided = |name: &str, root: &str, cause: &str| {
        let r = report(name);
        assert_eq!(r.root_cause.as_deref(), Some(root), "{name}: root cause");
        let c = r.get(root).unwrap_or_else(|| panic!("{name}: no {root}"));
        assert_eq!(
            c.cause,
            Some(CauseFinding::Decided { symptom: "module-not-loaded".into(), id: cause.into() }),
            "{name}: {}",
            c.finding.en()
        );
        c.clone()
    };
    // A driver branch that could not be built for a new kernel (akmods): nouveau runs the GPU
    // meanwhile, and the answer is a rebuild, not "install the driver" nor "blacklist nouveau".
    let c = decided("wild/akmod-560-fails-on-kernel-6-12", "DRV-04", "module-not-built-for-kernel");
    assert!(c.finding.en().contains("not built for the running kernel (6.12.0"), "{}", c.finding.en());
    let cmds = commands(&c);
    assert!(cmds.iter().any(|x| x.contains("akmods")), "{cmds:?}");
    assert!(!cmds.iter().any(|x| x.contains("blacklist")), "{cmds:?}");
    // The module built into RPM Fusion's and negativo17's extra/nvidia/ folder, nouveau bound.
    let c = decided("wild/nouveau-holds-gpu-fedora29-negativo17", "DRV-04", "nouveau-holds-gpu");
    assert!(commands(&c).iter().any(|x| x.contains("blacklist")), "{:?}", c.fixes);
    // Secure Boot refused the module and nouveau took the GPU: Secure Boot is the cause.
    let r = report("wild/secure-boot-on-fedora34-akmod-rtx2060s");
    decided("wild/secure-boot-on-fedora34-akmod-rtx2060s", "DRV-05", "secure-boot-refused-module");
    assert_eq!(r.get("DRV-04").and_then(|c| c.explained_by.as_deref()), Some("DRV-05"));
    // The open module refusing a Pascal GPU.
    let c = decided("wild/open-module-on-gtx1060-popos-570-open", "DRV-01", "open-module-unsupported-gpu");
    assert!(c.evidence.iter().any(|e| e.en().contains("is not supported by open nvidia.ko")), "{:?}", c.evidence);
    // The older fixtures keep their causes, now named.
    decided("no-driver", "DRV-01", "driver-not-installed");
    decided("module-missing-after-kernel-update", "DRV-01", "module-not-built-for-kernel");

    // Nothing collected says why: the symptom, and each candidate with its command.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let to = dir.path().join("c");
    let ok = std::process::Command::new("cp")
        .arg("-r")
        .arg(fixture("wild/open-module-on-gtx1060-popos-570-open"))
        .arg(&to)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok);
    let path = to.join("capture.json");
    let mut cap: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap_or_default()).unwrap_or_default();
    cap["meta"]["kernel_log"] = serde_json::json!({"lines": []});
    std::fs::write(&path, serde_json::to_vec(&cap).unwrap_or_default()).unwrap_or_default();
    let r = diagnose::run(&CapturedSystem::open(&to).unwrap_or_else(|e| panic!("{e}")));
    let c = r.get("DRV-01").unwrap_or_else(|| panic!("no DRV-01"));
    assert_eq!(r.root_cause.as_deref(), Some("DRV-01"));
    assert_eq!(
        c.cause,
        Some(CauseFinding::Candidates {
            symptom: "module-not-loaded".into(),
            ids: vec!["module-blacklisted".into(), "module-load-error".into()]
        })
    );
    assert_eq!(
        commands(c),
        ["grep -rs -e nvidia /etc/modprobe.d /usr/lib/modprobe.d /proc/cmdline", "sudo modprobe nvidia"]
    );
    // check --json carries the cause.
    let out =
        Command::cargo_bin("gpu-doctor-cli").unwrap().args(["check", "--json", "--from"]).arg(&to).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let drv01 = v["checks"].as_array().into_iter().flatten().find(|c| c["id"] == "DRV-01").cloned().unwrap_or_default();
    assert_eq!(drv01["cause"]["kind"], "candidates", "{drv01}");
    assert_eq!(drv01["cause"]["ids"][0], "module-blacklisted", "{drv01}");
}

/// Three rules from documented facts, held on machines from public threads: a device file that
/// answers with an I/O error is a GPU that did not start (its fatal Xid is the cause, not an
/// access rule); before CUDA 11 a PyTorch built for a newer minor version needs a newer driver
/// (minor-version compatibility began with CUDA 11); and PyTorch installed in `lib64` (Fedora,
/// RHEL and their kin put compiled packages there) is found.
#[test]
fn device_errors_old_cuda_minor_versions_and_lib64_pythons() {
    let r = report("wild/cmp40hx-pcie-gen2-unlock-fell-off-bus");
    assert_eq!(r.root_cause.as_deref(), Some("RT-XID"));
    let perm = r.get("PERM-02").unwrap_or_else(|| panic!("no PERM-02"));
    assert_eq!(perm.explained_by.as_deref(), Some("RT-XID"));
    assert!(perm.summary.en().contains("device error"), "{}", perm.summary.en());
    assert!(!perm.summary.en().contains("SELinux"), "{}", perm.summary.en());
    for name in ["wild/torch-1-3-cu101-driver-410", "wild/vllm-torch-cu121-driver-cuda-11-4-tencentos"] {
        let r = report(name);
        assert_eq!(r.root_cause.as_deref(), Some("CUDA-04"), "{name}");
        assert_eq!(r.get("CUDA-04").map(|c| c.verdict), Some(Verdict::Fail), "{name}");
    }
    let c = report("wild/vllm-torch-cu121-driver-cuda-11-4-tencentos");
    let ev = c.get("CUDA-04").map(|c| c.evidence.iter().map(|e| e.en()).collect::<Vec<_>>()).unwrap_or_default();
    assert!(ev.iter().any(|e| e.contains("/usr/local/lib64/python3.8/site-packages/torch/version.py")), "{ev:?}");
}

/// Issue 53, item 24: a GPU that fell off the bus and that NVML no longer lists is not "every GPU
/// answers": the check that GPUs answer names it by its bus id.
#[test]
fn a_gpu_gone_from_nvml_after_xid_79_is_not_every_gpu_answers() {
    let r = report("xid-79-one-of-four-gpus-lost");
    let c = r.get("RT-LOST").unwrap();
    // A warning beside the root cause (the Xid check names the fault), never a pass.
    assert_eq!(c.verdict, gpu_doctor::diagnose::Verdict::Warn, "{}", c.summary.en());
    assert_eq!(r.root_cause.as_deref(), Some("RT-XID"));
    assert!(c.summary.en().contains("0000:0b:00") && c.summary.en().contains("fell off the bus"), "{}", c.summary.en());
    // In Chinese the root cause carries the word GPU users search for.
    let root = r.root().unwrap();
    assert!(
        root.finding.render(gpu_doctor::i18n::Lang::ZhCn).contains("掉卡"),
        "{}",
        root.finding.render(gpu_doctor::i18n::Lang::ZhCn)
    );
}
