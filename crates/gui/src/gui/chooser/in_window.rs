//! gpu-doctor's own file chooser, drawn in the window where the desktop has no dialog. Nothing
//! that touches the file system runs on the window's thread: a folder is read (and a typed path
//! looked up) on a thread of its own, which wakes the window once when it is done, so a folder of
//! a hundred thousand files or a network mount that hangs never freezes the window, and the
//! window does not repaint while nothing changes. A folder that does not exist opens the nearest
//! one above it. Names are shown as text on one line (a name that is not UTF-8 with its bad bytes
//! as `\xNN`, a newline as `\n`). The chooser is modal: the keyboard stays in it,
//! and the path field has the focus when it opens.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use eframe::egui;

use super::Want;
use crate::tr;

/// At most this many entries of a folder are kept (sorted, folders first); the rest are counted.
pub const MAX_ENTRIES: usize = 50_000;

/// One entry of a folder.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its name as the file system has it.
    pub name: OsString,
    /// Its name as shown ([`shown_name`]).
    pub shown: String,
    /// A folder (or a link to one).
    pub dir: bool,
}

/// A name as one line of text: bytes that are not UTF-8 as `\xNN` (every byte shown, none lost
/// to a replacement character), a newline as `\n`.
pub fn shown_name(name: &std::ffi::OsStr) -> String {
    let mut out = String::new();
    for chunk in name.as_encoded_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    // A line end as its escape (a space would pass for a real one in a file name).
    crate::text::one_line(&out.replace('\n', "\\n").replace('\r', "\\r"))
}

/// What the reader thread found.
#[derive(Debug)]
pub enum Found {
    /// The folder listed (the one asked for, or the nearest existing one above it when that one
    /// does not exist: `missing` names it), with its entries and how many it holds in all.
    Folder { dir: PathBuf, missing: Option<PathBuf>, entries: Vec<Entry>, total: usize },
    /// The path is a file.
    File(PathBuf),
    /// The folder could not be read.
    Error { dir: PathBuf, error: String },
}

/// Reads `path` (on the reader thread): a folder's entries, a file, or the nearest existing
/// folder above a path that does not exist.
pub fn look(path: &Path) -> Found {
    let mut at = path.to_path_buf();
    let mut missing = None;
    loop {
        match std::fs::metadata(&at) {
            Ok(m) if m.is_dir() => break,
            Ok(_) if missing.is_none() => return Found::File(at),
            Ok(_) => {}
            Err(_) => {}
        }
        missing.get_or_insert_with(|| path.to_path_buf());
        match at.parent() {
            Some(p) if p != at => at = p.to_path_buf(),
            _ => return Found::Error { dir: path.to_path_buf(), error: tr!("no such folder").to_string() },
        }
    }
    let rd = match std::fs::read_dir(&at) {
        Ok(rd) => rd,
        Err(e) => return Found::Error { dir: at, error: e.to_string() },
    };
    let mut entries = Vec::new();
    let mut total = 0usize;
    for e in rd.flatten() {
        total += 1;
        if entries.len() >= MAX_ENTRIES {
            continue;
        }
        // The entry's own type (no stat call, except to follow a link).
        let dir = match e.file_type() {
            Ok(t) if t.is_symlink() => std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir()),
            Ok(t) => t.is_dir(),
            Err(_) => false,
        };
        let name = e.file_name();
        let shown = shown_name(&name);
        entries.push(Entry { name, shown, dir });
    }
    entries.sort_by_cached_key(|e| (!e.dir, e.shown.to_lowercase()));
    Found::Folder { dir: at, missing, entries, total }
}

/// The chooser's answer.
pub enum State {
    /// Still open.
    Open,
    /// This path was chosen.
    Chosen(PathBuf),
    /// Cancelled (the button, Escape or the window's close button).
    Cancelled,
}

/// The chooser drawn in the window.
pub struct InWindow {
    title: String,
    want: Want,
    /// The folder shown (once read).
    dir: PathBuf,
    /// The path field: a folder or file to go to, or (saving) the new file's name.
    field: String,
    found: Option<Found>,
    /// What the reader thread will answer.
    pending: Option<Arc<Mutex<Option<Found>>>>,
    /// The entries shown (indices into the listing: hidden files and other kinds filtered out).
    shown: Vec<usize>,
    selected: Option<usize>,
    show_hidden: bool,
    focus_field: bool,
    /// Choose what the pending look finds, if it is a file (Enter in the path field).
    choose_file: bool,
    /// The path last asked for: the field shows the folder found only while it still holds
    /// this (what the user typed meanwhile is theirs).
    asked: String,
}

impl InWindow {
    /// A chooser for `want` titled `title`, opening `dir`.
    pub fn new(ctx: &egui::Context, want: Want, dir: PathBuf, title: String) -> InWindow {
        let field = match &want {
            Want::Save(name, _) => name.clone(),
            _ => dir.display().to_string(),
        };
        let mut me = InWindow {
            title,
            want,
            dir: dir.clone(),
            field,
            found: None,
            pending: None,
            shown: Vec::new(),
            selected: None,
            show_hidden: false,
            focus_field: true,
            choose_file: false,
            asked: String::new(),
        };
        me.go(ctx, dir, false);
        me
    }

    /// Reads `path` on a thread of its own; the window is woken when it is done.
    fn go(&mut self, ctx: &egui::Context, path: PathBuf, choose_file: bool) {
        let slot = Arc::new(Mutex::new(None));
        let (out, ctx2) = (Arc::clone(&slot), ctx.clone());
        let spawned = std::thread::Builder::new().name("gd-chooser-read".into()).spawn(move || {
            let found = look(&path);
            if let Ok(mut o) = out.lock() {
                *o = Some(found);
            }
            ctx2.request_repaint();
        });
        if spawned.is_err() {
            return;
        }
        self.pending = Some(slot);
        self.choose_file = choose_file;
        self.asked = self.field.trim().to_string();
    }

    /// Takes the reader's answer when it has come.
    fn receive(&mut self) -> Option<PathBuf> {
        let found = self.pending.as_ref()?.lock().ok()?.take()?;
        self.pending = None;
        match found {
            Found::File(p) if self.choose_file && !matches!(self.want, Want::Folder) => return Some(p),
            Found::File(p) => {
                // A file typed where a folder is wanted: its folder.
                if let Some(parent) = p.parent() {
                    self.field = parent.display().to_string();
                }
            }
            Found::Folder { ref dir, .. } | Found::Error { ref dir, .. } => {
                self.dir = dir.clone();
                // The folder found replaces the path only if nobody typed meanwhile (then its
                // text is selected again, so typing replaces it).
                if !matches!(self.want, Want::Save(..)) && self.field.trim() == self.asked {
                    self.field = dir.display().to_string();
                    self.focus_field = true;
                }
                self.found = Some(found);
                self.selected = None;
                self.filter();
            }
        }
        None
    }

    /// The entries to show: folders, and the files of the kind wanted; hidden ones when asked.
    fn filter(&mut self) {
        self.shown.clear();
        let Some(Found::Folder { entries, .. }) = &self.found else { return };
        let ext = match &self.want {
            Want::File(Some((_, ext))) | Want::Save(_, (_, ext)) => Some(*ext),
            _ => None,
        };
        for (i, e) in entries.iter().enumerate() {
            if !self.show_hidden && e.shown.starts_with('.') {
                continue;
            }
            let kind_ok = e.dir
                || match (&self.want, ext) {
                    (Want::Folder, _) => false,
                    (_, Some(ext)) => Path::new(&e.name).extension().is_some_and(|x| x == ext),
                    (_, None) => true,
                };
            if kind_ok {
                self.shown.push(i);
            }
        }
    }

    fn entry(&self, i: usize) -> Option<&Entry> {
        match &self.found {
            Some(Found::Folder { entries, .. }) => entries.get(i),
            _ => None,
        }
    }

    /// Draws the chooser; its answer.
    pub fn show(&mut self, ctx: &egui::Context) -> State {
        if let Some(p) = self.receive() {
            return State::Chosen(p);
        }
        let mut state = State::Open;
        let mut open = true;
        let mut go: Option<(PathBuf, bool)> = None;
        let shown = egui::Window::new(self.title.clone())
            .id(egui::Id::unique("gd_in_window_chooser"))
            .open(&mut open)
            .collapsible(false)
            .default_size([760.0, 420.0])
            .show(ctx, |ui| {
                ui.horizontal(|ui| {
                    if ui.button(tr!("Up")).on_hover_text(tr!("The folder above")).clicked()
                        && let Some(p) = self.dir.parent()
                    {
                        go = Some((p.to_path_buf(), false));
                    }
                    if ui.button(tr!("Refresh")).on_hover_text(tr!("Read the folder again")).clicked() {
                        go = Some((self.dir.clone(), false));
                    }
                    let label = match self.want {
                        Want::Save(..) => tr!("File:"),
                        _ => tr!("Path:"),
                    };
                    let l = ui.label(label);
                    let field = ui
                        .add(egui::TextEdit::singleline(&mut self.field).desired_width(f32::INFINITY))
                        .labelled_by(l.id);
                    if self.focus_field {
                        // Focused with its text selected: what is typed replaces it (the field's
                        // state exists from its first frame on).
                        field.request_focus();
                        if let Some(mut st) = egui::TextEdit::load_state(ui.ctx(), field.id) {
                            self.focus_field = false;
                            let all = egui::text::CCursorRange::two(
                                egui::text::CCursor::new(0),
                                egui::text::CCursor::new(self.field.chars().count()),
                            );
                            st.cursor.set_char_range(Some(all));
                            st.store(ui.ctx(), field.id);
                        }
                    }
                    if field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                        let typed = PathBuf::from(self.field.trim());
                        let typed = if typed.is_absolute() { typed } else { self.dir.join(typed) };
                        match self.want {
                            Want::Save(..) => state = State::Chosen(typed),
                            _ => go = Some((typed, true)),
                        }
                    }
                });
                ui.horizontal(|ui| {
                    if ui.checkbox(&mut self.show_hidden, tr!("Show hidden files")).changed() {
                        self.filter();
                    }
                    ui.label(egui::RichText::new(self.status()).weak());
                });
                ui.separator();
                let row_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
                let height = (ui.available_height() - 36.0).max(row_h * 3.0);
                egui::ScrollArea::vertical().max_height(height).auto_shrink([false, false]).show_rows(
                    ui,
                    row_h,
                    self.shown.len(),
                    |ui, rows| {
                        for k in rows {
                            let i = self.shown[k];
                            let Some(e) = self.entry(i).cloned() else { continue };
                            let text = if e.dir { format!("{}/", e.shown) } else { e.shown.clone() };
                            let r = ui.selectable_label(self.selected == Some(i), text);
                            let activate =
                                r.double_clicked() || (r.has_focus() && ui.input(|x| x.key_pressed(egui::Key::Enter)));
                            if r.clicked() || r.gained_focus() {
                                self.selected = Some(i);
                                if !e.dir && matches!(self.want, Want::Save(..)) {
                                    self.field = e.shown.clone();
                                }
                            }
                            if activate {
                                let path = self.dir.join(&e.name);
                                go = Some((path, !e.dir));
                            }
                        }
                    },
                );
                ui.separator();
                ui.horizontal(|ui| {
                    let action = match self.want {
                        Want::Save(..) => tr!("Save"),
                        _ => tr!("Open"),
                    };
                    if ui.button(action).clicked() {
                        let selected =
                            self.selected.and_then(|i| self.entry(i)).map(|e| (self.dir.join(&e.name), e.dir));
                        match (&self.want, selected) {
                            (Want::Save(..), _) => {
                                let name = PathBuf::from(self.field.trim());
                                state = State::Chosen(if name.is_absolute() { name } else { self.dir.join(name) });
                            }
                            (Want::Folder, Some((p, true))) => state = State::Chosen(p),
                            (Want::Folder, _) => state = State::Chosen(self.dir.clone()),
                            (_, Some((p, true))) => go = Some((p, false)),
                            (_, Some((p, false))) => state = State::Chosen(p),
                            (_, None) => go = Some((PathBuf::from(self.field.trim()), true)),
                        }
                    }
                    if ui.button(tr!("Cancel")).clicked() {
                        state = State::Cancelled;
                    }
                });
            });
        // Modal, above every dialog (one of which may have opened it).
        if let Some(r) = &shown {
            ctx.memory_mut(|m| m.set_modal_layer(r.response.layer_id));
            ctx.move_to_top(r.response.layer_id);
        }
        if !open || ctx.input(|i| i.key_pressed(egui::Key::Escape)) {
            state = State::Cancelled;
        }
        if let Some((path, choose)) = go {
            self.go(ctx, path, choose);
        }
        state
    }

    /// The line under the path: reading, how many entries, what could not be read.
    fn status(&self) -> String {
        if self.pending.is_some() {
            return tr!("Reading the folder…").to_string();
        }
        match &self.found {
            Some(Found::Folder { missing: Some(m), total, .. }) => tr!(
                "{missing} does not exist: its nearest folder is shown ({n} items)",
                missing = m.display(),
                n = total
            )
            .to_string(),
            Some(Found::Folder { total, entries, .. }) if *total > entries.len() => tr!(
                "{total} items; the first {n} are listed (type a name in the path field to go to another)",
                total = total,
                n = entries.len()
            )
            .to_string(),
            Some(Found::Folder { total, .. }) => tr!("{n} items", n = total).to_string(),
            Some(Found::Error { dir, error }) => {
                tr!("Cannot read {dir}: {error}", dir = dir.display(), error = error).to_string()
            }
            _ => String::new(),
        }
    }
}
