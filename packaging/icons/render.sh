#!/usr/bin/env bash
# Renders the icon's PNG sizes (hicolor theme layout), the Windows .ico and the window icon from
# the SVG, the one source. Needs rsvg-convert (librsvg2-bin) and icotool (icoutils).
set -euo pipefail
cd "$(dirname "$0")"
id=io.github.gpu_doctor.GpuDoctor
svg=hicolor/scalable/apps/$id.svg
for n in 16 24 32 48 64 128 256 512; do
    mkdir -p "hicolor/${n}x${n}/apps"
    rsvg-convert -w "$n" -h "$n" "$svg" -o "hicolor/${n}x${n}/apps/$id.png"
done
p() { echo "hicolor/$1x$1/apps/$id.png"; }
# 256 px stored as PNG inside the .ico (Windows Vista and later), the smaller ones as bitmaps.
icotool -c -o ../windows/gpu-doctor.ico "$(p 16)" "$(p 24)" "$(p 32)" "$(p 48)" "$(p 64)" "$(p 128)" -r "$(p 256)"
cp "$(p 128)" ../../assets/icon.png
