//! Support material from the window: screenshots (button and Ctrl+Shift+S; saved under a name
//! that carries the host, tab and time and never overwrites a file; copied to the clipboard), the
//! report dialog (format, language, redaction, preview, save, copy) and file names for recordings.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use eframe::egui::{self, RichText};

use crate::i18n::{self, Lang};
use crate::report::redact::{RedactOptions, Redactor, Secrets};
use crate::report::{self, Format, ReportDoc};
use crate::tr;

pub use super::chooser::Chooser;
use super::chooser::Want;

/// Where screenshots and reports go by default: the Pictures folder when there is one, else the
/// home folder, else the current directory.
pub fn default_dir() -> PathBuf {
    let home = std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).map(PathBuf::from);
    let pictures = std::env::var_os("XDG_PICTURES_DIR")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join("Pictures")))
        .filter(|p| p.is_dir());
    pictures.or(home).filter(|p| p.is_dir()).unwrap_or_else(|| PathBuf::from("."))
}

/// Where recordings go: `$XDG_DATA_HOME/gpu-doctor/recordings` (default
/// `~/.local/share/...`; Windows `%LOCALAPPDATA%\gpu-doctor\recordings`), else the current directory.
pub fn recordings_dir() -> PathBuf {
    let base = if cfg!(windows) {
        std::env::var_os("LOCALAPPDATA").map(PathBuf::from)
    } else {
        std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("share")))
    };
    base.map(|b| b.join("gpu-doctor").join("recordings")).unwrap_or_else(|| PathBuf::from("."))
}

/// `dir/stem.ext`, or `stem-2.ext`, `stem-3.ext`... whichever does not exist yet.
pub fn unique_path(dir: &Path, stem: &str, ext: &str) -> PathBuf {
    // A link counts as taken, dangling or not: nothing is written through one.
    let taken = |p: &Path| std::fs::symlink_metadata(p).is_ok();
    let first = dir.join(format!("{stem}.{ext}"));
    if !taken(&first) {
        return first;
    }
    (2..10_000).map(|n| dir.join(format!("{stem}-{n}.{ext}"))).find(|p| !taken(p)).unwrap_or(first)
}

/// `path` itself when nothing is there yet, else the first free `stem-2.ext`, `stem-3.ext`...
/// beside it: a name the user gave is never overwritten, and never written through a link.
pub fn new_path_like(path: &Path) -> PathBuf {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "screenshot".into());
    let ext = path.extension().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "png".into());
    if std::fs::symlink_metadata(path).is_err() {
        return path.to_path_buf();
    }
    unique_path(dir, &stem, &ext)
}

/// A window image as PNG bytes.
pub fn png_bytes(image: &egui::ColorImage) -> Result<Vec<u8>, String> {
    let [w, h] = image.size;
    let rgba: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
    let mut png = Vec::new();
    image::ImageBuffer::<image::Rgba<u8>, _>::from_raw(w as u32, h as u32, rgba)
        .ok_or_else(|| tr!("bad image size").to_string())?
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| e.to_string())?;
    Ok(png)
}

/// A file-name stem: `gpu-doctor_HOST_TAB_20261130-031500`, without the host when host names are
/// redacted; characters that are unsafe in file names become `-`.
pub fn file_stem(what: &str, redact: &RedactOptions) -> String {
    let host = (!(redact.enabled && redact.hostname))
        .then(|| sysinfo::System::host_name().ok())
        .flatten()
        .filter(|h| !h.is_empty());
    let time = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let raw = match host {
        Some(h) => format!("gpu-doctor_{h}_{what}_{time}"),
        None => format!("gpu-doctor_{what}_{time}"),
    };
    raw.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '-' }).collect()
}

/// Writes a file that must not exist yet.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::safe_fs::write_new_atomic(path, bytes)
}

/// Takes a screenshot at the end of this frame; saves it to `path` (a new file; with `None`, to a
/// unique name in [`default_dir`]) and copies it to the clipboard. The outcome lands in `message`.
pub fn screenshot(ctx: &egui::Context, path: Option<PathBuf>, stem: String, message: Arc<Mutex<Option<String>>>) {
    let ctx2 = ctx.clone();
    ctx.request_screenshot(move |image: Arc<egui::ColorImage>| {
        let path = path.unwrap_or_else(|| unique_path(&default_dir(), &stem, "png"));
        let saved = png_bytes(&image).and_then(|png| write_new(&path, &png).map_err(|e| e.to_string()));
        ctx2.copy_image(egui::ColorImage::clone(&image));
        let text = match saved {
            Ok(()) => tr!("Screenshot saved to {path} and copied to the clipboard.", path = path.display()),
            Err(e) => tr!(
                "Could not save the screenshot to {path}: {error} (it was copied to the clipboard).",
                path = path.display(),
                error = e
            ),
        };
        if let Ok(mut m) = message.lock() {
            *m = Some(text);
        }
        ctx2.request_repaint();
    });
}

/// Starts choosing where to save a new file (the desktop's dialog, else one drawn in the window).
pub fn save_dialog(name: String, filter: (&'static str, &'static str)) -> Chooser {
    Chooser::start(Want::Save(name, filter), default_dir())
}

/// Starts choosing a file to open, in `dir`.
pub fn open_dialog(dir: PathBuf) -> Chooser {
    Chooser::start(Want::File(None), dir)
}

/// Starts choosing a file of one kind (label, extension) to open, in `dir`.
pub fn open_dialog_for(dir: PathBuf, kind: (&'static str, &'static str)) -> Chooser {
    Chooser::start(Want::File(Some(kind)), dir)
}

/// Starts choosing a folder to open, in `dir`.
pub fn folder_dialog(dir: PathBuf) -> Chooser {
    Chooser::start(Want::Folder, dir)
}

/// Polls a chooser: Some(Some(path)) chosen, Some(None) cancelled, None still open (an
/// in-window chooser is drawn meanwhile).
pub fn poll_dialog(ctx: &egui::Context, slot: &mut Option<Chooser>) -> Option<Option<PathBuf>> {
    super::chooser::poll(ctx, slot)
}

/// The report dialog.
pub struct ReportDialog {
    /// Shown.
    pub open: bool,
    /// Output format.
    pub format: Format,
    /// The report's language (the window's by default; English for support upstream).
    pub lang: Lang,
    /// What to redact.
    pub redact: RedactOptions,
    /// The rendered, redacted report for the preview (and for Save and Copy).
    pub preview: String,
    preview_for: Option<(Format, RedactOptions, Lang)>,
    doc: Option<ReportDoc>,
    /// The language `doc` was made in; the app makes it again when [`Self::lang`] differs.
    doc_lang: Lang,
    /// A report in another language is being made (its checks run again in that language).
    pub making: bool,
    save: Option<Chooser>,
    /// The last save or copy outcome.
    pub message: Option<String>,
    /// The machine a report made from a file describes: its names are redacted too.
    origin: Option<crate::diagnose::origin::Origin>,
    /// The keyboard focus moves to the first control when the dialog opens.
    focus_first: bool,
}

impl ReportDialog {
    /// A closed dialog with these redaction defaults.
    pub fn new(redact: RedactOptions) -> Self {
        ReportDialog {
            open: false,
            format: Format::Md,
            lang: Lang::En,
            redact,
            preview: String::new(),
            preview_for: None,
            doc: None,
            doc_lang: Lang::En,
            making: false,
            save: None,
            message: None,
            origin: None,
            focus_first: false,
        }
    }

    /// Opens the dialog on a freshly built (not yet redacted) document.
    pub fn show_for(&mut self, doc: ReportDoc, redact: RedactOptions, origin: Option<crate::diagnose::origin::Origin>) {
        self.doc = Some(doc);
        self.origin = origin;
        self.focus_first = !self.open;
        self.doc_lang = i18n::current();
        self.lang = self.doc_lang;
        self.making = false;
        self.redact = redact;
        self.preview_for = None;
        self.message = None;
        self.open = true;
    }

    /// The language a report must be made in, when the one shown is in another.
    pub fn wants_doc_in(&self) -> Option<Lang> {
        (self.open && self.doc.is_some() && self.lang != self.doc_lang && !self.making).then_some(self.lang)
    }

    /// The report made again in `lang`.
    pub fn set_doc(&mut self, doc: ReportDoc, lang: Lang) {
        self.doc = Some(doc);
        self.doc_lang = lang;
        self.making = false;
        self.preview_for = None;
    }

    fn refresh(&mut self) {
        let key = (self.format, self.redact, self.doc_lang);
        if self.preview_for == Some(key) {
            return;
        }
        if let Some(doc) = &self.doc {
            let mut d = doc.clone();
            let secrets = Secrets::this_machine().with_origin(self.origin.as_ref());
            report::redact_doc(&mut d, &mut Redactor::new(self.redact, secrets));
            self.preview = report::render(&d, self.format);
        }
        self.preview_for = Some(key);
    }

    /// Draws the dialog.
    pub fn ui(&mut self, ctx: &egui::Context) {
        if !self.open {
            return;
        }
        self.refresh();
        if let Some(answer) = poll_dialog(ctx, &mut self.save) {
            self.message = answer.map(|p| match write_new(&p, self.preview.as_bytes()) {
                Ok(()) => tr!("Saved {path}", path = p.display()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    tr!("{path} exists; reports never overwrite files. Choose another name.", path = p.display())
                }
                Err(e) => tr!("Could not save {path}: {error}", path = p.display(), error = e),
            });
        }
        let mut open = self.open;
        let shown =
            egui::Window::new(tr!("Support report")).open(&mut open).default_size([760.0, 560.0]).show(ctx, |ui| {
                ui.horizontal(|ui| {
                    ui.label(tr!("Format"));
                    let first = ui.selectable_value(&mut self.format, Format::Md, "Markdown");
                    if std::mem::take(&mut self.focus_first) {
                        first.request_focus();
                    }
                    ui.selectable_value(&mut self.format, Format::Html, tr!("HTML page"));
                    ui.selectable_value(&mut self.format, Format::Json, "JSON");
                    ui.separator();
                    ui.label(tr!("Language"));
                    for lang in Lang::ALL {
                        ui.selectable_value(&mut self.lang, lang, lang.native_name())
                            .on_hover_text(tr!("Support upstream often needs the report in English"));
                    }
                    if self.making || self.lang != self.doc_lang {
                        ui.spinner();
                    }
                });
                ui.horizontal_wrapped(|ui| {
                    ui.checkbox(&mut self.redact.enabled, tr!("Redact"));
                    ui.add_enabled_ui(self.redact.enabled, |ui| {
                        ui.checkbox(&mut self.redact.hostname, tr!("host name"));
                        ui.checkbox(&mut self.redact.users, tr!("user names and home paths"));
                        ui.checkbox(&mut self.redact.ip, tr!("IP addresses"));
                        ui.checkbox(&mut self.redact.mac, tr!("MAC addresses"));
                        ui.checkbox(&mut self.redact.gpu_ids, tr!("GPU UUIDs and serials"));
                    });
                });
                if !self.redact.enabled {
                    ui.colored_label(
                        super::palette::tone(ui, super::palette::Tone::Warn),
                        tr!("Not redacted: the report shows host and user names and addresses."),
                    );
                }
                ui.horizontal(|ui| {
                    if ui.button(tr!("Save...")).clicked() && self.save.is_none() {
                        let ext = self.format.extension();
                        let name = format!("{}.{ext}", file_stem("report", &self.redact));
                        self.save = Some(save_dialog(name, (tr!("Report"), ext)));
                    }
                    if ui.button(tr!("Copy")).clicked() {
                        ui.ctx().copy_text(self.preview.clone());
                        self.message = Some(tr!("Report copied to the clipboard.").to_string());
                    }
                    if let Some(m) = &self.message {
                        ui.label(m);
                    }
                });
                ui.label(RichText::new(tr!("Preview: exactly what will be saved or copied")).weak());
                egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
                    ui.add(egui::Label::new(RichText::new(&self.preview).monospace()).extend());
                });
            });
        if let Some(r) = &shown {
            super::hold_keyboard(ctx, &r.response);
        }
        self.open = open;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_paths_never_reuse_a_name() {
        let dir = tempfile::tempdir().unwrap();
        let a = unique_path(dir.path(), "shot", "png");
        assert!(a.ends_with("shot.png"));
        std::fs::write(&a, b"x").unwrap();
        let b = unique_path(dir.path(), "shot", "png");
        assert!(b.ends_with("shot-2.png"));
        assert!(write_new(&a, b"y").is_err());
        assert_eq!(std::fs::read(&a).unwrap_or_default(), b"x");
    }

    #[test]
    fn stems_drop_the_host_when_redacted() {
        let s = file_stem("monitor", &RedactOptions::default());
        assert!(s.starts_with("gpu-doctor_monitor_"), "{s}");
        assert!(s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)));
        let s = file_stem("monitor", &RedactOptions::off());
        if let Ok(h) = sysinfo::System::host_name() {
            assert!(s.contains(&h.replace(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)), "-")), "{s}");
        }
    }
}
