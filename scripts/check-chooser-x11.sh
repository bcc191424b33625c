#!/usr/bin/env bash
# Hands-on check of the file chooser's automatic choice on a real X server (issue 38, item 8): the
# window is started on its own Xvfb display twice, (1) with no D-Bus session and no zenity, as on
# a minimal or server install with X forwarding, and (2) with a D-Bus session that has no
# xdg-desktop-portal, where the desktop dialog answers "cancelled" at once; each time Open… is
# clicked with xdotool and the screen is saved as a PNG to look at: gpu-doctor's own chooser, its
# title saying why. Needs xvfb, xdotool, x11-apps (xwd) and dbus (dbus-run-session).
#
# Usage: scripts/check-chooser-x11.sh [BINARY] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/debug/gpu-doctor}")
out=${2:-target/screenshots}
mkdir -p "$out"
for tool in Xvfb xdotool xwd dbus-run-session; do
    command -v "$tool" >/dev/null || { echo "$tool not installed"; exit 1; }
done
if command -v zenity >/dev/null; then
    echo "zenity is installed: this machine has a desktop dialog, case 1 cannot be shown"
    exit 1
fi
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x800x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
sleep 1
home=$(mktemp -d /tmp/chooserXXXXXX)
# The capture at a path of fixed length, so the buttons after its name sit where this script
# clicks.
cp -r tests/fixtures/user-not-in-video-group "$home/capture"
shoot() { # name: the screen as PNG (xwd's 32-bit TrueColor dump, converted with Python's stdlib)
    DISPLAY=$display xwd -root -silent | python3 -c '
import struct, sys, zlib
d = sys.stdin.buffer.read()
f = struct.unpack(">25I", d[:100])
w, h, bpl = f[4], f[5], f[12]
px = d[f[0] + f[19] * 12:]
rows = b"".join(b"\0" + bytes(c for i in range(w) for c in px[y * bpl + 4 * i:y * bpl + 4 * i + 3][::-1]) for y in range(h))
chunk = lambda t, b: struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b))
sys.stdout.buffer.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
' >"$out/$1.png"
    echo "$out/$1.png"
}
case_run() { # name, command prefix...
    local name=$1
    shift
    env -u DBUS_SESSION_BUS_ADDRESS DISPLAY="$display" HOME="$home" "$@" "$bin" --tab checklist --size 1280x800 \
        --checklist-from "$home/capture" >/dev/null 2>&1 &
    local app=$!
    sleep 8
    shoot "chooser-$name-before"
    # "Open…" in the checklist's header at 1280x800 (English).
    DISPLAY=$display xdotool mousemove 590 44 click 1
    sleep 3
    shoot "chooser-$name"
    kill "$app" 2>/dev/null || true
    wait "$app" 2>/dev/null || true
}
case_run no-dbus-no-zenity
case_run dbus-without-portal dbus-run-session --
rm -rf "$home"
