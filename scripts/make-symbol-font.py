#!/usr/bin/env python3
"""Writes the two small fonts of the pictographs the in-window file chooser (the egui_file
crate) draws in its titles and its list (folder, open folder, floppy disk, up arrow, refresh,
folder and file entries), which egui's default fonts lack:
- assets/fonts/NotoEmoji-gpu-doctor.ttf, cut from Noto Emoji (monochrome; SIL Open Font License
  1.1, assets/fonts/LICENSE-OFL.txt);
- assets/fonts/emoji-icon-gpu-doctor.ttf, cut from emoji-icon-font (MIT,
  assets/fonts/LICENSE-emoji-icon-font.txt);
both as egui's own epaint_default_fonts ships them, found in the cargo registry. A few KiB instead
of the 740 KiB of both fonts whole on every start.

Needs fontTools (pip install fonttools):
    python3 scripts/make-symbol-font.py
"""
import glob
import os
import sys

from fontTools import subset
from fontTools.ttLib import TTFont

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (source font, output, the characters taken from it): what egui_file 0.29 draws.
CUTS = [
    ("NotoEmoji-Regular.ttf", "NotoEmoji-gpu-doctor.ttf", "📁📂"),
    ("emoji-icon-font.ttf", "emoji-icon-gpu-doctor.ttf", "💾⬆⟲🗀🗋"),
]


def cut(source, out, chars):
    font = TTFont(source)
    cmap = font.getBestCmap()
    missing = [c for c in chars if ord(c) not in cmap]
    if missing:
        sys.exit(f"{source} lacks {''.join(missing)}")
    options = subset.Options()
    options.layout_features = []
    options.name_IDs = ["*"]
    options.notdef_outline = True
    sub = subset.Subsetter(options)
    sub.populate(unicodes=[ord(c) for c in chars])
    sub.subset(font)
    font.save(out)
    print(f"{out}: {os.path.getsize(out)} bytes from {source}")


def main():
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    found = sorted(glob.glob(os.path.join(home, "registry/src/*/epaint_default_fonts-*/fonts")))
    if not found:
        sys.exit("epaint_default_fonts not found in the cargo registry: run cargo fetch first")
    for source, out, chars in CUTS:
        cut(os.path.join(found[-1], source), os.path.join(ROOT, "assets", "fonts", out), chars)


if __name__ == "__main__":
    main()
