#!/usr/bin/env python3
"""Writes assets/fonts/NotoSansSC-gpu-doctor.otf: the Simplified Chinese face of Noto Sans CJK
(SIL Open Font License 1.1, assets/fonts/LICENSE-OFL.txt), cut down to the characters of the
Chinese catalogue (i18n/zh-CN/*.ron) plus common Chinese punctuation, so the app shows its own
Chinese text on any machine without shipping a 16 MiB font. User data in Chinese (process names,
paths) is drawn with a system CJK font instead (eframe's system_fonts, looked up on demand).

Run after changing the catalogue; tests/suite/i18n.rs fails while a catalogue character has no glyph.
Needs fontTools (pip install fonttools) and the source font (Debian: fonts-noto-cjk; or
NotoSansCJK-Regular.ttc / NotoSansCJKsc-Regular.otf from github.com/notofonts/noto-cjk):
    python3 scripts/make-cjk-font.py [SOURCE_FONT]
"""
import ast
import glob
import os
import re
import sys

from fontTools import subset
from fontTools.ttLib import TTCollection, TTFont

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"
OUT = os.path.join(ROOT, "assets", "fonts", "NotoSansSC-gpu-doctor.otf")
# The Chinese quotation marks alone, for a Chinese window to draw them before egui's Latin font
# (which has narrow ones of its own): full-width, as Chinese sets them. Its line metrics are those
# of egui's Ubuntu-Light, so putting it first in the family changes no row's height.
QUOTES_OUT = os.path.join(ROOT, "assets", "fonts", "NotoSansSC-quotes-gpu-doctor.otf")
QUOTES = "“”‘’"
# Ubuntu-Light's vertical metrics (units per em 1000, as Noto Sans CJK's).
UBUNTU_LIGHT = {"hhea": (932, -189, 28), "typo": (776, -185, 56), "win": (932, 189)}
# Punctuation and symbols Chinese text uses beside the catalogue's own (full-width forms, quotes,
# the ideographic space and full stop, brackets, the middle dot, ellipsis and dashes).
# Also the languages' own names, which the language chooser shows in any language.
NATIVE_NAMES = "简体中文"
PUNCTUATION = "，。、；：？！“”‘’（）《》〈〉【】「」『』〔〕…—～·　％＋－＝／０１２３４５６７８９"


def catalogue_text():
    text = "".join(open(p, encoding="utf-8").read() for p in sorted(glob.glob(os.path.join(ROOT, "i18n", "zh-CN", "*.ron"))))
    chars = set()
    # One entry per line: "english": "中文", (tests/suite/i18n.rs holds the file to that form).
    for m in re.finditer(r'^\s*("(?:[^"\\]|\\.)*")\s*:\s*("(?:[^"\\]|\\.)*")\s*,', text, re.M):
        chars.update(ast.literal_eval(m.group(2)))
    return chars


def open_sc(path):
    if path.lower().endswith(".ttc"):
        for font in TTCollection(path).fonts:
            if font["name"].getDebugName(1) == "Noto Sans CJK SC":
                return font
        sys.exit(f"{path} has no 'Noto Sans CJK SC' face")
    return TTFont(path)


def main():
    chars = {c for c in catalogue_text() if ord(c) > 0x7F} | set(PUNCTUATION) | set(NATIVE_NAMES)
    font = open_sc(SOURCE)
    opts = subset.Options()
    opts.layout_features = ["kern", "vert", "locl"]
    opts.name_IDs = ["*"]
    opts.name_languages = ["*"]
    opts.hinting = False
    opts.desubroutinize = True
    sub = subset.Subsetter(opts)
    sub.populate(unicodes=sorted(ord(c) for c in chars))
    sub.subset(font)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    font.save(OUT)
    cmap = font.getBestCmap()
    missing = sorted(c for c in chars if ord(c) not in cmap)
    print(f"wrote {OUT}: {len(chars)} characters, {os.path.getsize(OUT)} bytes")
    if missing:
        print("not in the source font:", "".join(missing))
        sys.exit(1)
    quotes_font()


def quotes_font():
    font = open_sc(SOURCE)
    opts = subset.Options()
    opts.layout_features = []
    opts.name_IDs = ["*"]
    opts.name_languages = ["*"]
    opts.hinting = False
    opts.desubroutinize = True
    sub = subset.Subsetter(opts)
    sub.populate(unicodes=[ord(c) for c in QUOTES])
    sub.subset(font)
    assert font["head"].unitsPerEm == 1000
    hhea, os2 = font["hhea"], font["OS/2"]
    hhea.ascent, hhea.descent, hhea.lineGap = UBUNTU_LIGHT["hhea"]
    os2.sTypoAscender, os2.sTypoDescender, os2.sTypoLineGap = UBUNTU_LIGHT["typo"]
    os2.usWinAscent, os2.usWinDescent = UBUNTU_LIGHT["win"]
    font.save(QUOTES_OUT)
    print(f"wrote {QUOTES_OUT}: {QUOTES}, {os.path.getsize(QUOTES_OUT)} bytes")


main()
