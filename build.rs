//! Embeds the Windows resources (icon, version information from Cargo.toml, application manifest)
//! into the executables. Decided by the *target* OS, so a cross-build from Linux gets them too;
//! other targets get nothing.

fn main() {
    println!("cargo:rerun-if-changed=packaging/windows/gpu-doctor.ico");
    println!("cargo:rerun-if-changed=packaging/windows/gpu-doctor.manifest");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("windows") {
        return;
    }
    let mut res = winresource::WindowsResource::new();
    res.set_icon("packaging/windows/gpu-doctor.ico");
    res.set_manifest_file("packaging/windows/gpu-doctor.manifest");
    // Cross-building from Linux: the mingw toolchain's resource compiler and archiver.
    if std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu") && !cfg!(windows) {
        res.set_toolkit_path("/usr/bin");
        res.set_windres_path("x86_64-w64-mingw32-windres");
        res.set_ar_path("x86_64-w64-mingw32-ar");
    }
    if let Err(e) = res.compile() {
        // Without the resources the program still works; say why the icon is missing.
        println!("cargo:warning=Windows resources not embedded (icon, version, manifest): {e}");
    }
}
