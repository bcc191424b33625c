//! The app's colours, per theme. Every colour that text is drawn in comes from here, in a dark and
//! a light variant chosen so that text stands at least 4.5:1 (WCAG AA) against the background it is
//! drawn on: the panel and window fills of egui's dark and light visuals, or a banner's own fill.
//! A test computes the contrast of every pair. Chart lines use [`crate::gui::charts::gpu_color`];
//! text naming a GPU uses [`gpu_text`], the same hue made readable.

use eframe::egui::{self, Color32};

use crate::diagnose::Verdict;

/// What a coloured text means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Working as it should.
    Pass,
    /// Neutral information (also normal conditions such as a power cap reached under load).
    Info,
    /// Worth a look.
    Warn,
    /// Broken.
    Fail,
    /// Not judged or not applicable.
    Muted,
}

impl Tone {
    /// Every tone, for tests.
    pub const ALL: [Tone; 5] = [Tone::Pass, Tone::Info, Tone::Warn, Tone::Fail, Tone::Muted];

    /// The tone of a verdict.
    pub fn of(v: Verdict) -> Tone {
        match v {
            Verdict::Pass => Tone::Pass,
            Verdict::Info => Tone::Info,
            Verdict::Skipped => Tone::Muted,
            Verdict::Warn => Tone::Warn,
            Verdict::Fail => Tone::Fail,
        }
    }

    /// The text colour on the theme's own background (`dark`: the dark theme).
    pub fn text(self, dark: bool) -> Color32 {
        match (self, dark) {
            (Tone::Pass, true) => Color32::from_rgb(129, 199, 132),
            (Tone::Info, true) => Color32::from_rgb(144, 202, 249),
            (Tone::Warn, true) => Color32::from_rgb(255, 204, 128),
            (Tone::Fail, true) => Color32::from_rgb(255, 138, 128),
            (Tone::Muted, true) => Color32::from_gray(160),
            (Tone::Pass, false) => Color32::from_rgb(27, 94, 32),
            (Tone::Info, false) => Color32::from_rgb(13, 71, 161),
            (Tone::Warn, false) => Color32::from_rgb(138, 74, 0),
            (Tone::Fail, false) => Color32::from_rgb(183, 28, 28),
            (Tone::Muted, false) => Color32::from_gray(95),
        }
    }
}

/// True when `ui` is drawn with the dark theme.
pub fn is_dark(ui: &egui::Ui) -> bool {
    ui.visuals().dark_mode
}

/// A verdict's text colour in this `ui`'s theme.
pub fn verdict(ui: &egui::Ui, v: Verdict) -> Color32 {
    Tone::of(v).text(is_dark(ui))
}

/// A tone's text colour in this `ui`'s theme.
pub fn tone(ui: &egui::Ui, t: Tone) -> Color32 {
    t.text(is_dark(ui))
}

/// Text naming GPU `i` (card titles, legends): the chart line's hue, readable on the theme.
pub fn gpu_text(i: u32, dark: bool) -> Color32 {
    const DARK: [Color32; 8] = [
        Color32::from_rgb(118, 185, 0),
        Color32::from_rgb(66, 165, 245),
        Color32::from_rgb(255, 167, 38),
        Color32::from_rgb(206, 147, 216),
        Color32::from_rgb(38, 198, 218),
        Color32::from_rgb(239, 83, 80),
        Color32::from_rgb(212, 225, 87),
        Color32::from_rgb(188, 170, 164),
    ];
    const LIGHT: [Color32; 8] = [
        Color32::from_rgb(51, 105, 30),
        Color32::from_rgb(21, 101, 192),
        Color32::from_rgb(168, 80, 0),
        Color32::from_rgb(106, 27, 154),
        Color32::from_rgb(0, 110, 122),
        Color32::from_rgb(183, 28, 28),
        Color32::from_rgb(110, 100, 0),
        Color32::from_rgb(93, 64, 55),
    ];
    let table = if dark { &DARK } else { &LIGHT };
    table.get(i as usize % table.len()).copied().unwrap_or(Color32::GRAY)
}

/// A banner's fill and its text colours. Banners keep their own dark fill in both themes, so their
/// text colours are fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Banner {
    /// The fill.
    pub fill: Color32,
    /// The heading.
    pub heading: Color32,
    /// Body text.
    pub text: Color32,
    /// Secondary text.
    pub weak: Color32,
}

/// The no-GPU banner (amber).
pub const BANNER_NO_GPU: Banner = Banner {
    fill: Color32::from_rgb(74, 50, 20),
    heading: Color32::from_rgb(255, 204, 128),
    text: Color32::WHITE,
    weak: Color32::from_gray(215),
};
/// The GPU-asleep banner (blue).
pub const BANNER_ASLEEP: Banner = Banner {
    fill: Color32::from_rgb(28, 44, 66),
    heading: Color32::from_rgb(144, 202, 249),
    text: Color32::WHITE,
    weak: Color32::from_gray(215),
};
/// The not-responding banner (red).
pub const BANNER_STALL: Banner = Banner {
    fill: Color32::from_rgb(80, 24, 24),
    heading: Color32::from_rgb(255, 138, 128),
    text: Color32::WHITE,
    weak: Color32::from_gray(215),
};
/// The checklist's root-cause box (red).
pub const BANNER_ROOT_CAUSE: Banner = BANNER_STALL;
/// The checklist's all-clear box (green).
pub const BANNER_ALL_CLEAR: Banner = Banner {
    fill: Color32::from_rgb(24, 60, 32),
    heading: Color32::from_rgb(165, 214, 167),
    text: Color32::WHITE,
    weak: Color32::from_gray(215),
};
/// Every banner, for tests.
pub const BANNERS: [Banner; 5] = [BANNER_NO_GPU, BANNER_ASLEEP, BANNER_STALL, BANNER_ROOT_CAUSE, BANNER_ALL_CLEAR];

/// A label on a coloured badge (DEMO, REPLAY, CAPTURE, REMOTE): dark text on a light fill, in both themes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Badge {
    /// The fill.
    pub fill: Color32,
    /// The text.
    pub text: Color32,
}

/// The DEMO badge.
pub const BADGE_DEMO: Badge = Badge { fill: Color32::from_rgb(255, 183, 77), text: Color32::BLACK };
/// The REPLAY and CAPTURE badges.
pub const BADGE_REPLAY: Badge = Badge { fill: Color32::from_rgb(144, 202, 249), text: Color32::BLACK };
/// The REMOTE badge (a server over SSH).
pub const BADGE_REMOTE: Badge = Badge { fill: Color32::from_rgb(128, 203, 196), text: Color32::BLACK };
/// Every badge, for tests.
pub const BADGES: [Badge; 3] = [BADGE_DEMO, BADGE_REPLAY, BADGE_REMOTE];

/// Makes egui's own weak text (captions, hints) readable on both themes (its default is the text
/// colour at 60 % opacity, about 3:1), and gives scroll bars their own strip: egui's default
/// floating bars are drawn over the end of every line of a scrolled column.
pub fn tune(ctx: &egui::Context) {
    ctx.style_mut_of(egui::Theme::Dark, |s| s.visuals.weak_text_color = Some(WEAK_DARK));
    ctx.style_mut_of(egui::Theme::Light, |s| s.visuals.weak_text_color = Some(WEAK_LIGHT));
    // (With the handle always shown, so a column that scrolls looks it.)
    let scroll = egui::style::ScrollStyle { dormant_handle_opacity: 0.6, ..egui::style::ScrollStyle::solid() };
    ctx.all_styles_mut(|s| s.spacing.scroll = scroll);
}

/// Small text (captions, legends, card statistics): egui's 9 px, and 11 px in Chinese, whose
/// glyphs are unreadable at 9 px (issue 38, item 13).
pub fn small_text_for(ctx: &egui::Context, lang: crate::i18n::Lang) {
    let size = if lang == crate::i18n::Lang::ZhCn { SMALL_CJK } else { SMALL_LATIN };
    let now = ctx.global_style().text_styles.get(&egui::TextStyle::Small).map(|f| f.size);
    if now != Some(size) {
        ctx.all_styles_mut(|s| {
            s.text_styles.insert(egui::TextStyle::Small, egui::FontId::proportional(size));
        });
    }
}

/// egui's small text size.
pub const SMALL_LATIN: f32 = 9.0;
/// The smallest size Chinese text is drawn at.
pub const SMALL_CJK: f32 = 11.0;

/// Weak text on the dark theme.
pub const WEAK_DARK: Color32 = Color32::from_gray(150);
/// Weak text on the light theme.
pub const WEAK_LIGHT: Color32 = Color32::from_gray(100);

/// WCAG 2 contrast ratio of two opaque colours (1 to 21).
pub fn contrast(a: Color32, b: Color32) -> f32 {
    fn channel(c: u8) -> f32 {
        let c = f32::from(c) / 255.0;
        if c <= 0.039_28 { c / 12.92 } else { ((c + 0.055) / 1.055).powf(2.4) }
    }
    fn luminance(c: Color32) -> f32 {
        0.2126 * channel(c.r()) + 0.7152 * channel(c.g()) + 0.0722 * channel(c.b())
    }
    let (la, lb) = (luminance(a), luminance(b));
    let (hi, lo) = if la > lb { (la, lb) } else { (lb, la) };
    (hi + 0.05) / (lo + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The backgrounds text sits on in a theme: panels, windows (dialogs, the support card) and
    /// the faint stripes of striped grids.
    fn backgrounds(dark: bool) -> Vec<(&'static str, Color32)> {
        let v = if dark { egui::Visuals::dark() } else { egui::Visuals::light() };
        let stripe = blend_over(v.faint_bg_color, v.panel_fill);
        vec![("panel", v.panel_fill), ("window", v.window_fill), ("stripe", stripe)]
    }

    /// An additive or translucent colour drawn over an opaque background.
    fn blend_over(top: Color32, under: Color32) -> Color32 {
        let a = f32::from(top.a()) / 255.0;
        let mix = |t: u8, u: u8| (f32::from(t) + f32::from(u) * (1.0 - a)).round().min(255.0) as u8;
        Color32::from_rgb(mix(top.r(), under.r()), mix(top.g(), under.g()), mix(top.b(), under.b()))
    }

    #[test]
    fn contrast_matches_known_values() {
        assert!((contrast(Color32::BLACK, Color32::WHITE) - 21.0).abs() < 0.01);
        assert!((contrast(Color32::WHITE, Color32::WHITE) - 1.0).abs() < 0.01);
        // The light theme's old WARN headline: #FFCC80 on #F8F8F8, about 1.5:1.
        assert!(contrast(Color32::from_rgb(255, 204, 128), Color32::from_gray(248)) < 2.0);
    }

    #[test]
    fn every_text_colour_reads_at_4_5_to_1_on_its_background_in_both_themes() {
        let mut bad = Vec::new();
        for dark in [true, false] {
            let theme = if dark { "dark" } else { "light" };
            let mut texts: Vec<(String, Color32)> =
                Tone::ALL.iter().map(|t| (format!("{t:?}"), t.text(dark))).collect();
            texts.extend((0..8).map(|i| (format!("GPU {i}"), gpu_text(i, dark))));
            texts.push(("weak".into(), if dark { WEAK_DARK } else { WEAK_LIGHT }));
            let v = if dark { egui::Visuals::dark() } else { egui::Visuals::light() };
            texts.push(("body".into(), v.text_color()));
            for (bg_name, bg) in backgrounds(dark) {
                for (name, fg) in &texts {
                    let c = contrast(*fg, bg);
                    if c < 4.5 {
                        bad.push(format!("{theme}: {name} on {bg_name} {c:.2}:1"));
                    }
                }
            }
        }
        for b in BANNERS {
            for (name, fg) in [("heading", b.heading), ("text", b.text), ("weak", b.weak)] {
                let c = contrast(fg, b.fill);
                if c < 4.5 {
                    bad.push(format!("banner {:?}: {name} {c:.2}:1", b.fill));
                }
            }
        }
        for b in BADGES {
            let c = contrast(b.text, b.fill);
            if c < 4.5 {
                bad.push(format!("badge {:?}: {c:.2}:1", b.fill));
            }
        }
        assert!(bad.is_empty(), "too little contrast: {bad:#?}");
    }
}
