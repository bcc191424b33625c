//! CUDA-08: the CUDA that the other frameworks' installed builds target — TensorFlow, JAX, ONNX
//! Runtime, PaddlePaddle — against the newest CUDA the driver runs (PyTorch has CUDA-04).
//!
//! Each framework writes the CUDA it was built for into a file of its package, read here without
//! running Python:
//! * TensorFlow: `tensorflow/python/platform/build_info.py` (`cuda_version`, `is_cuda_build`; what
//!   `tf.sysconfig.get_build_info()` returns);
//! * ONNX Runtime: `onnxruntime/capi/build_and_package_info.py` (`package_name`, `__version__`,
//!   `cuda_version` in GPU builds, written by its setup.py);
//! * PaddlePaddle: `paddle/version/__init__.py` (`full_version`, `cuda_version`, `'False'` in CPU
//!   builds; what `paddle.version.cuda()` returns);
//! * JAX: its CUDA plugin package, `jax_cuda12_plugin` (or 13), names the CUDA major version
//!   (<https://docs.jax.dev/en/latest/installation.html>).
//!
//! A build for a newer CUDA major version than the driver runs does not start on it; a newer minor
//! version runs with minor-version compatibility from CUDA 11 on
//! (<https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html>).

use super::Ctx;
use crate::diagnose::{Check, Verdict, parse};
use crate::i18n::Message;
use crate::msg;

/// One framework build found.
struct Build {
    /// "TensorFlow", "JAX", "ONNX Runtime", "PaddlePaddle".
    framework: &'static str,
    /// The file or folder that says so.
    path: String,
    /// The framework's version, when its file says.
    version: Option<String>,
    /// The CUDA it targets ("12.3", or "12" when only the major version is known); `None` for a
    /// CPU-only build.
    cuda: Option<String>,
}

/// The JAX CUDA plugins looked for (their package names carry the CUDA major version).
const JAX_CUDA_MAJORS: &[u32] = &[11, 12, 13, 14];

fn builds(cx: &Ctx) -> Vec<Build> {
    let mut out = Vec::new();
    for sp in super::cuda::site_packages(cx) {
        let tf = format!("{sp}/tensorflow/python/platform/build_info.py");
        if let Some(text) = cx.v.read(&tf) {
            let cuda_build = parse::build_value(&text, "is_cuda_build").is_none_or(|v| v == "True");
            let cuda = parse::build_value(&text, "cuda_version").filter(|v| cuda_build && is_version(v));
            out.push(Build { framework: "TensorFlow", path: tf, version: None, cuda });
        }
        let ort = format!("{sp}/onnxruntime/capi/build_and_package_info.py");
        if let Some(text) = cx.v.read(&ort) {
            let cuda = parse::build_value(&text, "cuda_version").filter(|v| is_version(v));
            out.push(Build {
                framework: "ONNX Runtime",
                path: ort,
                version: parse::build_value(&text, "__version__"),
                cuda,
            });
        }
        let paddle = format!("{sp}/paddle/version/__init__.py");
        if let Some(text) = cx.v.read(&paddle) {
            let cuda = parse::build_value(&text, "cuda_version").filter(|v| is_version(v));
            out.push(Build {
                framework: "PaddlePaddle",
                path: paddle,
                version: parse::build_value(&text, "full_version"),
                cuda,
            });
        }
        for major in JAX_CUDA_MAJORS {
            let plugin = format!("{sp}/jax_cuda{major}_plugin/__init__.py");
            if cx.v.exists(&plugin) {
                out.push(Build { framework: "JAX", path: plugin, version: None, cuda: Some(major.to_string()) });
            }
        }
    }
    out
}

fn is_version(v: &str) -> bool {
    !v.is_empty()
        && v.chars().next().is_some_and(|c| c.is_ascii_digit())
        && v.chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn major(v: &str) -> u32 {
    v.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0)
}

pub(super) fn framework_builds_vs_driver(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().quick {
        return super::left_out_by_quick(c);
    }
    let found = builds(cx);
    if found.is_empty() {
        return c.verdict(
            Verdict::Skipped,
            msg!(
                "no TensorFlow, JAX, ONNX Runtime or PaddlePaddle install found in the {n} Python environments looked at",
                n = super::cuda::python_prefixes(cx).len()
            ),
        );
    }
    let driver = cx.nvml.and_then(|n| n.inventory.cuda_driver_version.as_ref()).and_then(|r| r.value().cloned());
    let mut worst = Verdict::Pass;
    let mut notes = Vec::new();
    let mut first_fail: Option<(&'static str, String)> = None;
    let mut first_cpu: Option<&'static str> = None;
    let mut c = c;
    for b in &found {
        let name = match &b.version {
            Some(v) => format!("{} {v}", b.framework),
            None => b.framework.to_string(),
        };
        let (v, note) = match (&b.cuda, &driver) {
            (None, _) => {
                first_cpu.get_or_insert(b.framework);
                (Verdict::Warn, msg!("{name} is a CPU-only build: it never uses the GPU", name = name.as_str()))
            }
            (Some(bc), Some(dc)) => {
                let newer = crate::knowledge::cmp_version(dc, bc) == std::cmp::Ordering::Less;
                let minor_only = bc.contains('.');
                if newer && (major(dc) < major(bc) || (major(bc) < 11 && minor_only)) {
                    first_fail.get_or_insert((b.framework, bc.clone()));
                    (
                        Verdict::Fail,
                        msg!(
                            "{name} is built for CUDA {bc}, but the driver runs CUDA {dc} at most",
                            name = name.as_str(),
                            bc = bc.as_str(),
                            dc = dc.as_str()
                        ),
                    )
                } else if newer && minor_only {
                    (
                        Verdict::Warn,
                        msg!(
                            "{name} is built for CUDA {bc}, newer than the driver's CUDA {dc}: it runs in minor-version compatibility with a limited feature set",
                            name = name.as_str(),
                            bc = bc.as_str(),
                            dc = dc.as_str()
                        ),
                    )
                } else {
                    (
                        Verdict::Pass,
                        msg!(
                            "{name} (CUDA {bc}) runs on this driver (CUDA {dc})",
                            name = name.as_str(),
                            bc = bc.as_str(),
                            dc = dc.as_str()
                        ),
                    )
                }
            }
            (Some(bc), None) => (
                Verdict::Info,
                msg!(
                    "{name} is built for CUDA {bc}; the driver's CUDA version is unknown",
                    name = name.as_str(),
                    bc = bc.as_str()
                ),
            ),
        };
        worst = worst.max(v);
        c = c.evidence(msg!("{label}: {value}", label = b.path.as_str(), value = note.clone()));
        notes.push(note);
    }
    let list = || {
        let mut names: Vec<&str> = found.iter().map(|b| b.framework).collect();
        names.dedup();
        names.join(", ")
    };
    let c = c.verdict(worst, Message::join(notes, &msg!("; ")));
    match (worst, first_fail, first_cpu) {
        (Verdict::Fail, Some((framework, bc)), _) => {
            let min = crate::knowledge::cuda::cuda_family_min_driver(major(&bc))
                .map_or_else(Message::default, |(linux, _)| msg!(" (Linux >= {linux} for CUDA {major})", linux = linux, major = major(&bc)));
            let c = c.found(msg!("{framework} needs a newer driver than this one", framework = framework))
                .explain(msg!("A framework build brings its own CUDA libraries, which need a driver of at least that CUDA major version; the driver's libcuda cannot run a newer one."));
            // In a container the driver is the host's: no package inside changes it.
            if cx.container.is_some() {
                c.text(msg!(
                    "Update the NVIDIA driver on the host{min} (a container uses the host's driver, which nothing installed inside it can change), or install a {framework} build for the CUDA the driver runs (see the framework's installation page).",
                    min = min,
                    framework = framework
                ))
            } else {
                c.text(msg!(
                    "Update the NVIDIA driver{min}, or install a {framework} build for the CUDA the driver runs (see the framework's installation page).",
                    min = min,
                    framework = framework
                ))
            }
        }
        (Verdict::Warn, _, Some(framework)) => c
            .found(msg!("{framework} is a CPU-only build", framework = framework))
            .text(msg!("Install the framework's CUDA build (TensorFlow: tensorflow[and-cuda]; ONNX Runtime: onnxruntime-gpu; PaddlePaddle: paddlepaddle-gpu; JAX: jax[cuda12]) in that environment, for a CUDA no newer than the driver's.")),
        (Verdict::Warn, _, _) => c.found(msg!("A framework's CUDA is newer than the driver's (limited compatibility)")),
        (Verdict::Info, _, _) => c.found(msg!("Frameworks found: {list}; the driver's CUDA version is unknown", list = list())),
        _ => c.found(msg!("{list} run on this driver", list = list())),
    }
}
