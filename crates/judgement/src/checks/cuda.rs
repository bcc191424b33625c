//! CUDA checks (CUDA-*): the newest CUDA the driver supports, the driver's CUDA library, `cuInit`,
//! and the PyTorch builds found in Python environments against the driver and the GPUs'
//! architectures. Also the `CUresult` names and meanings shared with the smoke test.
//!
//! Sources: the CUDA Toolkit release notes, CUDA driver table
//! (<https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html>);
//! NVIDIA's minor-version compatibility rules
//! (<https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html>); the CUDA
//! driver API's `CUresult` codes; PyTorch's `torch/version.py` and its wheel index
//! (<https://download.pytorch.org/whl/>).

use super::Ctx;
use crate::diagnose::parse;
use crate::diagnose::system::{Platform, VENV_NAMES};
use crate::diagnose::{Check, Verdict};
use crate::i18n::Message;

fn driver_cuda(cx: &Ctx) -> Option<String> {
    cx.nvml.and_then(|n| n.inventory.cuda_driver_version.as_ref()).and_then(|r| r.value().cloned())
}

pub(super) fn driver_cuda_version(c: Check, cx: &Ctx) -> Check {
    match driver_cuda(cx) {
        Some(v) => c
            .verdict(Verdict::Info, format!("CUDA {v}"))
            .found(crate::msg!("The driver runs CUDA up to {v}", v = v))
            .explain(crate::msg!("This is what nvidia-smi shows as 'CUDA Version': the newest CUDA the driver runs, not an installed toolkit (`nvcc --version` shows that).")),
        None => c.verdict(Verdict::Skipped, crate::msg!("NVML did not report it")),
    }
}

pub(super) fn cuda_lib(c: Check, cx: &Ctx) -> Check {
    match cx.v.meta().libraries.iter().find(|l| l.name == "libcuda.so.1") {
        Some(l) if crate::diagnose::ldcache::in_operator_root(&l.path) => super::nvml::operator_managed(c, &l.path),
        Some(l) => c
            .verdict(Verdict::Pass, crate::msg!("found {path}", path = l.path))
            .found(crate::msg!("The CUDA driver library is present"))
            .evidence(crate::msg!(
                "{path} -> {target} (via {via})",
                path = l.path,
                target = l.real_path,
                via = crate::i18n::Message::new(&l.via)
            )),
        None if cx.v.meta().platform == Platform::Windows => c.not_here("Linux", crate::msg!("Windows uses nvcuda.dll")),
        None => c
            .verdict(Verdict::Fail, crate::msg!("libcuda.so.1 was not found in the library path"))
            .found(crate::msg!("The CUDA driver library (libcuda.so.1) is missing"))
            .explain(crate::msg!("CUDA programs load the driver's libcuda.so.1; without it nothing can use the GPU."))
            .text(crate::msg!("Install the driver's CUDA library (Ubuntu: libnvidia-compute-<branch>; it comes with the full nvidia-driver-<branch> package). In a container: start it with --gpus all so the toolkit mounts it.")),
    }
}

pub(super) fn cuda_init(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().quick && cx.v.meta().cuda.is_none() {
        return c.verdict(
            Verdict::Skipped,
            crate::msg!("not run by check --quick (starting CUDA can take seconds); the full check runs it"),
        );
    }
    let Some(p) = &cx.v.meta().cuda else {
        return c.verdict(Verdict::Skipped, crate::msg!("not probed (a sleeping GPU is left asleep)"));
    };
    if let Some(secs) = p.did_not_return {
        let call = p.hung_call.as_deref().unwrap_or("cuInit");
        return c
            .verdict(Verdict::Fail, crate::msg!("{call} did not return within {secs} s", call = call, secs = secs))
            .found(crate::msg!("CUDA hangs when it starts ({call} does not return)", call = call))
            .text(crate::msg!(
                "A call that never returns means a hung driver, not a missing one: see the driver check."
            ));
    }
    let Some(lib) = &p.library else {
        if let Some(l) =
            cx.v.meta()
                .libraries
                .iter()
                .find(|l| l.name == "libcuda.so.1" && crate::diagnose::ldcache::in_operator_root(&l.path))
        {
            return super::nvml::operator_managed(c, &l.path);
        }
        return c
            .verdict(Verdict::Fail, crate::msg!("no CUDA driver library could be loaded"))
            .found(crate::msg!("No CUDA driver library could be loaded"))
            .evidence(p.load_error.clone().unwrap_or_default())
            .text(crate::msg!("Install the NVIDIA driver (it provides libcuda.so.1 / nvcuda.dll); in a container start it with --gpus all; in WSL keep /usr/lib/wsl/lib on the library path."));
    };
    if let (None, Some(crash)) = (p.init_code, &p.load_error) {
        return c
            .verdict(Verdict::Fail, crate::msg!("{lib} loaded, then {crash}", lib = lib, crash = crash))
            .found(crate::msg!("CUDA crashes when it starts"))
            .evidence(crash.clone())
            .text(crate::msg!("A crash inside the CUDA driver library most often means it does not match the loaded kernel module (the driver was updated without a reboot) or the install is damaged: the driver checks say which. Reboot after a driver update; otherwise reinstall the driver."));
    }
    let c = c.evidence(crate::msg!(
        "{label}: {value}",
        label = format!("{lib}: cuInit"),
        value = p.init_code.map_or(crate::msg!("not called"), |x| Message::data(x.to_string()))
    ));
    match p.init_code {
        Some(0) if p.devices == Some(0) => super::cuinit::cuda_does_not_start(c, None, cx),
        Some(0) => c
            .verdict(
                Verdict::Pass,
                crate::msg!(
                    "CUDA driver API {version} sees {n} device(s)",
                    version = p.driver_version.as_deref().unwrap_or("?"),
                    n = p.devices.map_or("?".to_string(), |d| d.to_string())
                ),
            )
            .found(crate::msg!("CUDA starts")),
        Some(code) => super::cuinit::cuda_does_not_start(c, Some(code), cx),
        None => c
            .verdict(Verdict::Fail, crate::msg!("{lib} has no cuInit: not a CUDA driver library", lib = lib))
            .found(crate::msg!("The CUDA library found is not a CUDA driver")),
    }
}

/// At most this many Python environments are looked at, and this many names of a home or working
/// directory are looked through for `.venv`/`venv` folders: the search stays bounded on a shared
/// server with thousands of users or projects.
const MAX_PYTHON_PREFIXES: usize = 256;
const MAX_DIR_NAMES: usize = 512;

/// The Python environments (prefixes holding `lib/python3.*`) a user may run, activated or not:
/// the active ones, those whose `bin` is on `PATH`, conda's (`~/.conda/environments.txt`,
/// `envs_dirs` in `~/.condarc`, the usual install folders and their `envs`), pyenv's versions,
/// `.venv`/`venv` folders in and one level under each home and the working directory, and the
/// system's. No subprocess: everything comes from files and folder listings.
pub(crate) fn python_prefixes<'c>(cx: &'c Ctx) -> &'c [String] {
    cx.python.get_or_init(|| find_python_prefixes(cx))
}

fn find_python_prefixes(cx: &Ctx) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let add = |p: &str, out: &mut Vec<String>| {
        let p = p.trim().trim_end_matches('/');
        if p.starts_with('/') && p.len() > 1 && out.len() < MAX_PYTHON_PREFIXES && !out.iter().any(|o| o == p) {
            out.push(p.to_string());
        }
    };
    for k in ["CONDA_PREFIX", "VIRTUAL_ENV"] {
        if let Some(p) = cx.env(k) {
            add(p, &mut out);
        }
    }
    for dir in cx.env("PATH").unwrap_or_default().split(':') {
        if let Some(prefix) = dir.trim_end_matches('/').strip_suffix("/bin") {
            add(prefix, &mut out);
        }
    }
    let homes: Vec<String> =
        cx.v.list("/home")
            .unwrap_or_default()
            .into_iter()
            .take(MAX_DIR_NAMES)
            .map(|h| format!("/home/{h}"))
            .chain(["/root".to_string()])
            .collect();
    let mut env_dirs: Vec<String> =
        cx.env("CONDA_ENVS_PATH").unwrap_or_default().split(':').map(String::from).collect();
    env_dirs.push("/opt/conda/envs".into());
    for h in &homes {
        add(&format!("{h}/.local"), &mut out);
        for line in cx.v.read(&format!("{h}/.conda/environments.txt")).unwrap_or_default().lines().take(MAX_DIR_NAMES) {
            add(line, &mut out);
        }
        env_dirs.extend(crate::diagnose::parse::condarc_envs_dirs(
            &cx.v.read(&format!("{h}/.condarc")).unwrap_or_default(),
            h,
        ));
        env_dirs.push(format!("{h}/.conda/envs"));
        for conda in ["miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba"] {
            add(&format!("{h}/{conda}"), &mut out);
            env_dirs.push(format!("{h}/{conda}/envs"));
        }
    }
    let pyenv_roots =
        cx.env("PYENV_ROOT").map(String::from).into_iter().chain(homes.iter().map(|h| format!("{h}/.pyenv")));
    for pyenv in pyenv_roots.collect::<Vec<_>>() {
        for v in cx.v.list(&format!("{pyenv}/versions")).unwrap_or_default().into_iter().take(MAX_DIR_NAMES) {
            add(&format!("{pyenv}/versions/{v}"), &mut out);
            env_dirs.push(format!("{pyenv}/versions/{v}/envs"));
        }
    }
    for d in env_dirs.iter().filter(|d| !d.is_empty()) {
        for env in cx.v.list(d).unwrap_or_default().into_iter().take(MAX_DIR_NAMES) {
            add(&format!("{d}/{env}"), &mut out);
        }
    }
    // Project environments: `.venv`/`venv` in each home and the working directory, and one level
    // under them (`~/project/.venv`).
    let mut roots = homes.clone();
    if let Some(pwd) = cx.env("PWD").filter(|p| p.starts_with('/') && *p != "/") {
        roots.push(pwd.trim_end_matches('/').to_string());
    }
    for r in &roots {
        let names = cx.v.list(r).unwrap_or_default();
        for venv in VENV_NAMES {
            if names.iter().any(|n| n == venv) {
                add(&format!("{r}/{venv}"), &mut out);
            }
        }
        for sub in names.iter().filter(|n| !n.starts_with('.')).take(MAX_DIR_NAMES) {
            let below = cx.v.list(&format!("{r}/{sub}")).unwrap_or_default();
            for venv in &VENV_NAMES[..2] {
                if below.iter().any(|n| n == venv) {
                    add(&format!("{r}/{sub}/{venv}"), &mut out);
                }
            }
        }
    }
    for p in ["/usr", "/usr/local", "/opt/conda"] {
        add(p, &mut out);
    }
    out
}

/// The package folders of the Python environments (`…/lib/python3.X/site-packages`, and
/// `dist-packages` where Debian puts them).
pub(super) fn site_packages(cx: &Ctx) -> Vec<String> {
    let mut out = Vec::new();
    for p in python_prefixes(cx) {
        // `lib64`: where Fedora, RHEL and their kin put compiled packages (pip's platlib,
        // `/usr/local/lib64/python3.X/site-packages`), torch among them.
        for lib in ["lib", "lib64"] {
            // Bounded like the prefixes: a listing of millions of names is not read past this.
            for py in
                cx.v.list(&format!("{p}/{lib}"))
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|d| d.starts_with("python3"))
                    .take(8)
            {
                for sp in ["site-packages", "dist-packages"] {
                    let d = format!("{p}/{lib}/{py}/{sp}");
                    if !out.contains(&d) {
                        out.push(d);
                    }
                }
            }
        }
    }
    out
}

/// Python environments' `torch/version.py` files.
fn torch_installs(cx: &Ctx) -> Vec<String> {
    site_packages(cx).into_iter().map(|sp| format!("{sp}/torch/version.py")).filter(|f| cx.v.exists(f)).collect()
}

/// The Python 3 minor version of an install, from its path (`…/lib/python3.12/site-packages/…`).
fn python_minor(path: &str) -> Option<u32> {
    let rest = &path[path.find("python3.")? + "python3.".len()..];
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

pub(super) fn torch_builds_vs_driver(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().quick {
        return super::left_out_by_quick(c);
    }
    let installs = torch_installs(cx);
    if installs.is_empty() {
        return c.verdict(
            Verdict::Skipped,
            crate::msg!(
                "no PyTorch install found in the {n} Python environments looked at (active, on PATH, conda, pyenv, .venv/venv folders, system)",
                n = python_prefixes(cx).len()
            ),
        );
    }
    let driver = driver_cuda(cx);
    let mut worst = Verdict::Pass;
    let mut notes = Vec::new();
    // What the notes say, kept as facts (the notes are prose in the reader's language).
    let mut cpu_only = false;
    let mut need: Option<String> = None;
    // The Python of the install that needs a newer driver (3.N from its site-packages path).
    let mut python: Option<u32> = None;
    let mut c = c;
    for f in &installs {
        let text = cx.v.read(f).unwrap_or_default();
        let ver = parse::torch_version(&text).unwrap_or_else(|| "?".into());
        let (v, note) = match (parse::torch_cuda(&text), &driver) {
            (None, _) => (Verdict::Skipped, crate::msg!("{f}: torch {ver}, no cuda line", f = f, ver = ver)),
            (Some(None), _) => {
                cpu_only = true;
                (
                    Verdict::Warn,
                    crate::msg!("torch {ver} is a CPU-only build ({f}): it never uses the GPU", ver = ver, f = f),
                )
            }
            (Some(Some(tc)), Some(dc)) => {
                let major = |s: &str| s.split('.').next().and_then(|m| m.parse::<u32>().ok()).unwrap_or(0);
                match crate::knowledge::cmp_version(dc, &tc) {
                    // Minor-version compatibility began with CUDA 11: a build for CUDA 10.1
                    // needs a driver for 10.1 (418.39 or newer), not just any 10.x one; from 11
                    // on, a driver of an older major version is what it cannot run on.
                    std::cmp::Ordering::Less if major(&tc) < 11 || major(dc) < major(&tc) => {
                        if need.is_none() {
                            python = python_minor(f);
                        }
                        need.get_or_insert_with(|| tc.clone());
                        let note = if major(&tc) < 11 {
                            crate::msg!(
                                "torch {ver} needs CUDA {tc}, but the driver supports only CUDA {dc} (before CUDA 11 every minor version needs its own driver)",
                                ver = ver,
                                tc = tc,
                                dc = dc
                            )
                        } else {
                            crate::msg!(
                                "torch {ver} needs CUDA {tc}, but the driver supports only CUDA {dc} (older major version)",
                                ver = ver,
                                tc = tc,
                                dc = dc
                            )
                        };
                        (Verdict::Fail, note)
                    }
                    std::cmp::Ordering::Less => (
                        Verdict::Warn,
                        crate::msg!(
                            "torch {ver} is built for CUDA {tc}, newer than the driver's CUDA {dc}: it runs in minor-version compatibility with a limited feature set",
                            ver = ver,
                            tc = tc,
                            dc = dc
                        ),
                    ),
                    _ => (
                        Verdict::Pass,
                        crate::msg!(
                            "torch {ver} (CUDA {tc}) runs on this driver (CUDA {dc})",
                            ver = ver,
                            tc = tc,
                            dc = dc
                        ),
                    ),
                }
            }
            (Some(Some(tc)), None) => (
                Verdict::Info,
                crate::msg!(
                    "torch {ver} built for CUDA {tc}; the driver's CUDA version is unknown",
                    ver = ver,
                    tc = tc
                ),
            ),
        };
        worst = worst.max(v);
        c = c.evidence(crate::msg!("{label}: {value}", label = f, value = note));
        notes.push(note);
    }
    let finding = match worst {
        Verdict::Fail => crate::msg!("PyTorch needs a newer driver than this one"),
        Verdict::Warn if cpu_only => crate::msg!("PyTorch is a CPU-only build"),
        Verdict::Warn => crate::msg!("PyTorch's CUDA is newer than the driver's (limited compatibility)"),
        Verdict::Pass => crate::msg!("PyTorch runs on this driver"),
        Verdict::Info => crate::msg!("PyTorch found; the driver's CUDA version is unknown"),
        Verdict::Skipped => crate::msg!("PyTorch found without CUDA information"),
    };
    let mut c = c.verdict(worst, Message::join(notes, &crate::msg!("; "))).found(finding);
    if worst == Verdict::Fail {
        let need = need.unwrap_or_default();
        let major = need.split('.').next().and_then(|m| m.parse::<u32>().ok()).unwrap_or(0);
        // Minor-version compatibility: any driver of the same CUDA major version runs the build.
        let min = crate::knowledge::cuda::cuda_family_min_driver(major)
            .map(|(l, w)| match w {
                Some(w) => crate::msg!(
                    "Linux >= {linux}, Windows >= {windows} for any CUDA {major} build",
                    linux = l,
                    windows = w,
                    major = major
                ),
                None => crate::msg!("Linux >= {linux} for any CUDA {major} build", linux = l, major = major),
            })
            .or_else(|| {
                crate::knowledge::cuda::cuda_min_driver(&need).map(|(l, w)| {
                    Message::data(format!("Linux >= {l}{}", w.map(|w| format!(", Windows >= {w}")).unwrap_or_default()))
                })
            })
            .unwrap_or_default();
        c = c.explain(crate::msg!(
            "PyTorch ships its own CUDA runtime, which needs a driver of at least that CUDA major version ({min}).",
            min = min
        ));
        // In a container the driver is the host's: no package inside changes it.
        c = if cx.container.is_some() {
            c.text(crate::msg!(
                "Update the NVIDIA driver on the host ({min}): a container uses the host's driver, which nothing installed inside it can change. Or install a PyTorch build the driver can run:",
                min = min
            ))
        } else {
            c.text(crate::msg!(
                "Update the NVIDIA driver ({min}), or install a PyTorch build the driver can run:",
                min = min
            ))
        };
        let driver = cx.nvml.and_then(|n| n.inventory.driver_version.as_ref().and_then(|d| d.value().cloned()));
        let dc = driver_cuda(cx);
        let wheel = |d: &str| match python {
            Some(py) => crate::knowledge::frameworks::torch_wheel_for_python(d, driver.as_deref(), py),
            None => crate::knowledge::frameworks::torch_wheel_for_driver(d, driver.as_deref()),
        };
        c = match dc.as_deref().and_then(wheel) {
            Some((tag, "")) => c.cmd(format!("pip install torch --index-url https://download.pytorch.org/whl/{tag}")),
            Some((tag, last)) => {
                c.cmd(format!("pip install torch=={last} --index-url https://download.pytorch.org/whl/{tag}"))
            }
            // Builds exist for the driver, none for this environment's Python.
            None if let (Some(py), Some((_, last))) = (
                python,
                dc.as_deref().and_then(|d| crate::knowledge::frameworks::torch_wheel_for_driver(d, driver.as_deref())),
            ) =>
            {
                let newest = if last.is_empty() { crate::knowledge::torch_pythons::TORCH_PYTHONS[0].0 } else { last };
                let (lo, hi) = crate::knowledge::frameworks::torch_pythons(newest).unwrap_or((0, 0));
                c.text(crate::msg!(
                    "No PyTorch build this driver can run has a wheel for Python 3.{py} (torch {newest} has them for Python 3.{lo} to 3.{hi}): update the driver, or create an environment with Python 3.{hi} for it.",
                    py = py,
                    newest = newest,
                    lo = lo,
                    hi = hi
                ))
            }
            None => c.text(crate::msg!("No PyTorch build supports a driver this old: update the driver.")),
        };
    } else if worst == Verdict::Warn && cpu_only {
        c = c.text(crate::msg!("Install a CUDA build of PyTorch (pick the CUDA version at pytorch.org/get-started; it must not be newer than the newest CUDA the driver supports, shown under CUDA and frameworks)."));
    }
    c
}

pub(super) fn gpu_arch_in_torch_builds(c: Check, cx: &Ctx) -> Check {
    if cx.v.meta().quick {
        return super::left_out_by_quick(c);
    }
    let installs = torch_installs(cx);
    let gpus: Vec<(u32, String, f64)> = cx
        .nvml
        .map(|n| {
            n.inventory
                .gpus
                .iter()
                .filter_map(|g| {
                    g.compute_capability
                        .value()
                        .and_then(|cc| cc.parse::<f64>().ok().map(|v| (g.index, g.name.clone(), v)))
                })
                .collect()
        })
        .unwrap_or_default();
    if installs.is_empty() || gpus.is_empty() {
        return c.verdict(Verdict::Skipped, crate::msg!("needs a PyTorch install and the GPUs' compute capability"));
    }
    let mut c = c;
    let mut worst = Verdict::Pass;
    // The first GPU without kernels, said as its evidence line.
    let mut first_missing: Option<Message> = None;
    for f in &installs {
        let text = cx.v.read(f).unwrap_or_default();
        let (Some(ver), Some(Some(cuda))) = (parse::torch_version(&text), parse::torch_cuda(&text)) else { continue };
        let (min_cc, blackwell) = crate::knowledge::frameworks::torch_arch_support(&ver, &cuda);
        let max_cc = crate::knowledge::frameworks::cuda_max_cc(&cuda);
        for (i, name, cc) in &gpus {
            let (v, note) = if *cc < min_cc {
                (
                    Verdict::Fail,
                    crate::msg!(
                        "torch {ver} has no kernels for GPU {i} ({name}, compute capability {cc}; this build needs {min_cc} or newer)",
                        ver = ver,
                        i = i,
                        name = name,
                        cc = format!("{cc:.1}"),
                        min_cc = format!("{min_cc:.1}")
                    ),
                )
            } else if *cc > max_cc + 0.01 && *cc < 10.0 {
                // Built with a CUDA that cannot compile for this GPU.
                (
                    Verdict::Fail,
                    crate::msg!(
                        "torch {ver} (CUDA {cuda}) predates GPU {i} ({name}, compute capability {cc}): CUDA {cuda} compiles for compute capability {max} at most, so 'no kernel image is available'; use a build for CUDA {need} or newer",
                        ver = ver,
                        cuda = cuda,
                        i = i,
                        name = name,
                        cc = format!("{cc:.1}"),
                        max = format!("{max_cc:.1}"),
                        need = crate::knowledge::frameworks::cuda_for_cc(*cc)
                    ),
                )
            } else if *cc >= 10.0 && !blackwell {
                (
                    Verdict::Fail,
                    crate::msg!(
                        "torch {ver} (CUDA {cuda}) predates GPU {i} ({name}, compute capability {cc}): 'no kernel image is available'; use a CUDA 12.8+ build",
                        ver = ver,
                        cuda = cuda,
                        i = i,
                        name = name,
                        cc = format!("{cc:.1}")
                    ),
                )
            } else {
                (
                    Verdict::Pass,
                    crate::msg!(
                        "torch {ver} runs on GPU {i} (compute capability {cc})",
                        ver = ver,
                        i = i,
                        cc = format!("{cc:.1}")
                    ),
                )
            };
            worst = worst.max(v);
            if v == Verdict::Fail && first_missing.is_none() {
                first_missing = Some(note.clone());
            }
            c = c.evidence(note);
        }
    }
    let summary = if worst == Verdict::Pass {
        crate::msg!("every GPU is covered by the PyTorch builds found")
    } else {
        first_missing.unwrap_or_default()
    };
    let c = c.verdict(worst, summary).found(if worst == Verdict::Pass {
        crate::msg!("PyTorch has kernels for every GPU")
    } else {
        crate::msg!("PyTorch has no kernels for this GPU")
    });
    if worst == Verdict::Fail {
        c.text(crate::msg!("Install a PyTorch build whose CUDA version covers this GPU (Blackwell: cu128 or newer; Maxwell/Pascal: cu126 or older), not newer than the driver's CUDA version."))
    } else {
        c
    }
}
