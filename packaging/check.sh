#!/usr/bin/env bash
# Checks the artifacts packaging/build.sh made (target/dist/packages) with the distributions' own
# tools and runs them as a user would:
#   metadata: desktop-file-validate, appstreamcli validate --no-net, lintian (no errors),
#             rpm -qip / -qlp (every file in place)
#   .deb:     installed with apt (dependencies resolved), gpu-doctor-cli --version and info run
#             from /usr/bin, then removed (nothing left)
#   tarball:  install.sh --user into a scratch HOME, run, --uninstall (nothing left)
#   Windows:  subsystems and imported DLLs (objdump), embedded icon/version/manifest (wrestool);
#             under Wine with Xvfb: the CLI's --version, info, check --json, vram, report; the
#             installer /S and its uninstaller; the window taking a --screenshot (OpenGL)
#             the same executables with GPUs: packaging/check-wine-gpu.sh (fake nvml.dll, nvcuda.dll)
# Run as root (it installs the .deb). Each check prints OK, FAIL or SKIP with the reason; the
# script fails if any check failed. Wine logs go to target/dist/wine/.
set -uo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C.UTF-8 GPU_DOCTOR_LANG=en
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
id=io.github.gpu_doctor.GpuDoctor
out=target/dist/packages
failed=0
ok() { echo "OK: $*"; }
bad() { echo "FAIL: $*"; failed=1; }
skip() { echo "SKIP: $*"; }
have() { command -v "$1" >/dev/null 2>&1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

echo "== metadata"
if have desktop-file-validate; then
    desktop-file-validate "packaging/linux/$id.desktop" && ok "desktop-file-validate" || bad "desktop-file-validate"
else skip "desktop-file-validate not installed (desktop-file-utils)"; fi
if have appstreamcli; then
    appstreamcli validate --no-net "packaging/linux/$id.metainfo.xml" && ok "appstreamcli validate" || bad "appstreamcli validate"
else skip "appstreamcli not installed (appstream)"; fi

deb=$(ls "$out"/*.deb 2>/dev/null | head -1)
rpm_file=$(ls "$out"/*.rpm 2>/dev/null | head -1)
expected_files="/usr/bin/gpu-doctor /usr/bin/gpu-doctor-cli /usr/share/applications/$id.desktop
/usr/share/metainfo/$id.metainfo.xml /usr/share/icons/hicolor/scalable/apps/$id.svg
/usr/share/icons/hicolor/16x16/apps/$id.png /usr/share/icons/hicolor/512x512/apps/$id.png
/usr/share/man/man1/gpu-doctor-cli.1.gz /usr/share/man/man1/gpu-doctor-cli-check.1.gz /usr/share/man/man1/gpu-doctor.1.gz
/usr/share/bash-completion/completions/gpu-doctor-cli.bash /usr/share/fish/vendor_completions.d/gpu-doctor-cli.fish"

echo "== .deb"
if [ -z "$deb" ]; then
    bad "no .deb in $out"
else
    listing=$(dpkg-deb -c "$deb")
    for f in $expected_files; do
        grep -q " \.$f\$" <<<"$listing" || bad ".deb lacks $f"
    done
    grep -q 'usr/share/doc/gpu-doctor/LICENSE-OFL-NotoSansSC.txt$' <<<"$listing" \
        && ok ".deb ships the bundled font's licence (OFL)" || bad ".deb lacks the bundled font's licence (OFL)"
    dpkg-deb -f "$deb" Depends | grep -qi nvidia && bad ".deb depends on an NVIDIA package"
    echo ".deb Depends: $(dpkg-deb -f "$deb" Depends)"
    if have lintian; then
        # Errors fail the check; warnings are printed.
        lintian --fail-on error --suppress-tags-from-file /dev/null "$deb" && ok "lintian (no errors)" || bad "lintian reported errors"
    else skip "lintian not installed"; fi
    if [ "$(id -u)" = 0 ] && have apt-get; then
        if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$(realpath "$deb")" >"$scratch/apt.log" 2>&1; then
            v=$(/usr/bin/gpu-doctor-cli --version)
            [ "$v" = "gpu-doctor-cli $version" ] && ok "installed gpu-doctor-cli --version: $v" || bad "installed --version said '$v'"
            /usr/bin/gpu-doctor-cli info >"$scratch/info.txt" 2>&1
            rc=$?
            # 0 with a driver; 3 = no NVML here (the CI machine), with the explanation.
            if [ $rc = 0 ] || { [ $rc = 3 ] && grep -q "libnvidia-ml.so.1" "$scratch/info.txt"; }; then
                ok "installed gpu-doctor-cli info (exit $rc)"
            else
                bad "installed gpu-doctor-cli info exit $rc: $(head -5 "$scratch/info.txt")"
            fi
            dpkg -r gpu-doctor >/dev/null && [ ! -e /usr/bin/gpu-doctor-cli ] && [ ! -e "/usr/share/applications/$id.desktop" ] \
                && ok "dpkg -r removed every file" || bad "dpkg -r left files behind"
        else
            bad "apt-get install of the .deb failed: $(tail -5 "$scratch/apt.log")"
        fi
    else skip "the .deb install test needs root and apt"; fi
fi

echo "== .rpm"
if [ -z "$rpm_file" ]; then
    bad "no .rpm in $out"
elif have rpm; then
    rpm -qip "$rpm_file" | sed -n '1,4p'
    rlist=$(rpm -qlp "$rpm_file" 2>/dev/null)
    missing=0
    for f in $expected_files; do grep -qx "$f" <<<"$rlist" || { bad ".rpm lacks $f"; missing=1; }; done
    [ $missing = 0 ] && ok "rpm -qlp lists every file ($(wc -l <<<"$rlist") files)"
    grep -q 'LICENSE-OFL-NotoSansSC.txt$' <<<"$rlist" && ok ".rpm ships the bundled font's licence (OFL)" \
        || bad ".rpm lacks the bundled font's licence (OFL)"
    rpm -qp --requires "$rpm_file" 2>/dev/null | grep -qi nvidia && bad ".rpm requires something NVIDIA"
else skip "rpm not installed: the .rpm was not inspected"; fi

echo "== tarball with install.sh --user"
tarball=$(ls "$out"/*-linux.tar.gz 2>/dev/null | head -1)
if [ -z "$tarball" ]; then
    bad "no Linux tarball in $out"
else
    home="$scratch/home"
    mkdir -p "$home"
    tar -C "$scratch" -xzf "$tarball"
    dir=$(ls -d "$scratch"/gpu-doctor-*-x86_64-linux)
    [ -f "$dir/LICENSE-OFL-NotoSansSC.txt" ] && ok "the tarball ships the bundled font's licence (OFL)" \
        || bad "the tarball lacks the bundled font's licence (OFL)"
    if HOME="$home" XDG_DATA_HOME= "$dir/install.sh" --user >"$scratch/install.log" 2>&1; then
        v=$("$home/.local/bin/gpu-doctor-cli" --version)
        [ "$v" = "gpu-doctor-cli $version" ] && ok "~/.local/bin/gpu-doctor-cli --version: $v" || bad "--version said '$v'"
        d="$home/.local/share/applications/$id.desktop"
        grep -q "^Exec=\"$home/.local/bin/gpu-doctor\"" "$d" && ok "the installed launcher names the program by its path" || bad "launcher Exec: $(grep ^Exec "$d")"
        ! have desktop-file-validate || desktop-file-validate "$d" || bad "the installed launcher does not validate"
        [ -f "$home/.local/share/icons/hicolor/256x256/apps/$id.png" ] || bad "icon not installed"
        HOME="$home" XDG_DATA_HOME= "$dir/install.sh" --uninstall >/dev/null 2>&1
        left=$(find "$home" -type f | wc -l)
        [ "$left" = 0 ] && ok "install.sh --uninstall removed every file" || bad "install.sh --uninstall left $left files: $(find "$home" -type f | head -3)"
    else
        bad "install.sh --user failed: $(tail -3 "$scratch/install.log")"
    fi
fi

echo "== Windows executables"
zip=$(ls "$out"/*-windows-x64.zip 2>/dev/null | head -1)
setup=$(ls "$out"/*-windows-x64-setup.exe 2>/dev/null | head -1)
if [ -z "$zip" ]; then
    skip "no Windows build in $out (see packaging/build.sh's SKIP line)"
    exit $failed
fi
win="$scratch/win"
mkdir -p "$win"
python3 -m zipfile -e "$zip" "$win"
exe_dir=$(ls -d "$win"/gpu-doctor-*-windows-x64)
gui="$exe_dir/gpu-doctor.exe" cli="$exe_dir/gpu-doctor-cli.exe"
[ -f "$exe_dir/LICENSE-OFL-NotoSansSC.txt" ] && ok "the .zip ships the bundled font's licence (OFL)" \
    || bad "the .zip lacks the bundled font's licence (OFL)"
objdump=x86_64-w64-mingw32-objdump
if have $objdump; then
    # (Headers read into variables first: grep -q closing a pipe early fails the pipeline.)
    gui_head=$($objdump -p "$gui") cli_head=$($objdump -p "$cli")
    grep -q "Subsystem.*(Windows GUI)" <<<"$gui_head" && ok "gpu-doctor.exe is a GUI program (no console on double-click)" || bad "gpu-doctor.exe is not GUI subsystem"
    grep -q "Subsystem.*(Windows CUI)" <<<"$cli_head" && ok "gpu-doctor-cli.exe is a console program" || bad "gpu-doctor-cli.exe is not console subsystem"
    for e in "$gui" "$cli"; do
        dlls=$($objdump -p "$e" | sed -n 's/^\s*DLL Name: //p' | sort -fu | tr '\n' ' ')
        grep -qiE "libgcc|libstdc|libwinpthread" <<<"$dlls" && bad "$(basename "$e") imports a mingw runtime DLL: $dlls" || ok "$(basename "$e") imports only system DLLs: $dlls"
    done
else skip "no mingw objdump: subsystems and imports not checked"; fi
if have wrestool; then
    for e in "$gui" "$cli"; do
        res=$(wrestool -l "$e")
        grep -q "type=14" <<<"$res" && grep -q "type=16" <<<"$res" && grep -q "type=24" <<<"$res" \
            && ok "$(basename "$e") embeds its icon, version information and manifest" || bad "$(basename "$e") resources: $res"
    done
    versions=$(wrestool -x --raw -t16 "$gui" | strings -el)
    grep -q "^$version" <<<"$versions" && ok "file properties show version $version" || bad "version $version not in the version resource"
else skip "wrestool not installed (icoutils): resources not checked"; fi

echo "== under Wine"
wine=$(command -v wine64 || ls /usr/lib/wine/wine64 2>/dev/null || true)
if [ -z "$wine" ]; then
    skip "Wine not installed (apt-get install wine wine64): the Windows build was not run"
    exit $failed
fi
logs=target/dist/wine
rm -rf "$logs"; mkdir -p "$logs"
# Wine's error lines stay on (a DLL that does not load is reported there); its "fixme" lines go.
export WINEPREFIX="$scratch/wineprefix" WINEDEBUG=fixme-all WINEDLLOVERRIDES="mscoree,mshtml="
# One X server for every Wine program: Wine's desktop process starts with the first program and
# keeps the display it found, so a prefix first used without one cannot open windows later.
if have Xvfb; then
    display=":$((200 + RANDOM % 100))"
    Xvfb "$display" -screen 0 1400x900x24 -nolisten tcp >/dev/null 2>&1 &
    xvfb_pid=$!
    trap 'kill $xvfb_pid 2>/dev/null; rm -rf "$scratch"' EXIT
    export DISPLAY="$display"
    sleep 1
fi
"$wine" wineboot -i >"$logs/wineboot.log" 2>&1
w() { timeout 120 "$wine" "$@"; }
if ! w "$cli" --version >"$logs/version.log" 2>&1; then
    if grep -qi "bcryptprimitives" "$logs/version.log"; then
        echo "Wine $("$wine" --version 2>/dev/null) lacks ProcessPrng (bcryptprimitives.dll): installing the test-only shim"
        x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
            packaging/windows/wine/bcryptprimitives.c packaging/windows/wine/bcryptprimitives.def -ladvapi32
        export WINEDLLOVERRIDES="$WINEDLLOVERRIDES;bcryptprimitives=n"
    fi
fi
v=$(w "$cli" --version 2>"$logs/version.log" | tr -d '\r')
[ "$v" = "gpu-doctor-cli $version" ] && ok "wine gpu-doctor-cli.exe --version: $v" || bad "wine --version: '$v' ($(tail -3 "$logs/version.log"))"
w "$cli" info >"$logs/info.txt" 2>&1
rc=$?
if [ $rc = 3 ] && grep -q "nvml.dll" "$logs/info.txt"; then ok "wine info: exit 3, explains where nvml.dll is looked for"; else bad "wine info: exit $rc: $(head -5 "$logs/info.txt")"; fi
w "$cli" check --json >"$logs/check.json" 2>"$logs/check.err"
rc=$?
# The Windows checklist: Windows' own checks, none that reads Linux sources.
python3 -c '
import json, sys
ids = [c["id"] for c in json.load(open(sys.argv[1]))["checks"]]
assert "WIN-ADAPTER" in ids and "WIN-TORCH" in ids, ids
linux = [i for i in ids if i.split("-")[0] in ("CONT", "PERM", "WSL") or i in ("HW-01", "HW-02", "DRV-01", "DRV-05", "CUDA-LIB", "ENV-03", "RT-XID")]
assert not linux, linux' "$logs/check.json" 2>"$logs/check-ids.err" \
    && ok "wine check --json: the Windows checklist, $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["checks"]))' "$logs/check.json") checks, no Linux-only check (exit $rc)" \
    || bad "wine check --json: exit $rc: $(tail -2 "$logs/check-ids.err") $(head -c 300 "$logs/check.json") $(tail -3 "$logs/check.err")"
w "$cli" vram --preset Llama-3.1-8B >"$logs/vram.txt" 2>&1 && grep -qi "GiB" "$logs/vram.txt" && ok "wine vram --preset Llama-3.1-8B" || bad "wine vram: $(head -5 "$logs/vram.txt")"
w "$cli" report --demo idle --sample 1 --out 'Z:\'"$(realpath "$logs" | tr / '\\')"'\report.md' >"$logs/report.log" 2>&1
[ -s "$logs/report.md" ] && grep -q "gpu-doctor report" "$logs/report.md" && ok "wine report --out wrote a report" || bad "wine report: $(tail -3 "$logs/report.log")"

if [ -n "$setup" ]; then
    w "$setup" /S >"$logs/setup.log" 2>&1
    appdata=$(ls -d "$WINEPREFIX"/drive_c/users/*/AppData/Local 2>/dev/null | head -1)
    inst="$appdata/Programs/gpu-doctor"
    if [ -x "$inst/gpu-doctor-cli.exe" ] || [ -f "$inst/gpu-doctor-cli.exe" ]; then
        iv=$(w "$inst/gpu-doctor-cli.exe" --version 2>/dev/null | tr -d '\r')
        [ "$iv" = "gpu-doctor-cli $version" ] && ok "installer /S: installed for this user without admin rights; it runs: $iv" || bad "installed CLI said '$iv'"
        start_menu=$(find "$WINEPREFIX/drive_c/users" -name 'gpu-doctor.lnk' 2>/dev/null | head -1)
        [ -n "$start_menu" ] && ok "Start-menu entry: ${start_menu#"$WINEPREFIX"/}" || bad "no Start-menu entry"
        w "$inst/uninstall.exe" /S >"$logs/uninstall.log" 2>&1
        for _ in $(seq 1 60); do [ -e "$inst/gpu-doctor.exe" ] || break; sleep 1; done
        [ ! -e "$inst" ] && ok "uninstaller /S removed the folder" || bad "after uninstall: $(ls "$inst" 2>&1)"
    else
        bad "installer /S did not install into $inst: $(tail -3 "$logs/setup.log")"
    fi
else skip "no installer was built (makensis missing)"; fi

if [ -n "${DISPLAY:-}" ]; then
    shot="$logs/wine-screenshot.png"
    timeout 180 "$wine" "$gui" --demo data-starved --gpus 2 --renderer gl \
        --size 1280x800 --frames 10 --screenshot 'Z:\'"$(realpath "$logs" | tr / '\\')"'\wine-screenshot.png' >"$logs/gui.log" 2>&1
    rc=$?
    if [ -s "$shot" ] && python3 packaging/png-check.py "$shot" 1280 800
    then ok "wine GUI screenshot with OpenGL: $shot"; else bad "wine GUI screenshot (exit $rc): $(tail -5 "$logs/gui.log")"; fi
    # The renderer fallback. wgpu cannot draw under this Wine (its DX12 runs on vkd3d, which
    # fails to compile the shaders): the app must retry with OpenGL and still take the picture.
    winlogs='Z:\'"$(realpath "$logs" | tr / '\\')"
    timeout 180 "$wine" "$gui" --demo idle --renderer wgpu --size 1024x700 --frames 5 \
        --screenshot "$winlogs"'\wgpu-fallback.png' >"$logs/gui-wgpu.log" 2>&1
    if grep -q "retrying once with gl" "$logs/gui-wgpu.log" && [ -s "$logs/wgpu-fallback.png" ]; then
        ok "wine: wgpu failed, the window came up on OpenGL (gui-wgpu.log)"
    elif [ -s "$logs/wgpu-fallback.png" ]; then
        ok "wine: wgpu drew the window itself"
    else bad "wine: no window after wgpu failed: $(tail -3 "$logs/gui-wgpu.log")"; fi
    # No OpenGL 2+ (RDP, a VM, a broken driver): Mesa told to offer OpenGL 1.1 only. The app must
    # retry with wgpu and, when that cannot draw either, name the commands that need no window.
    MESA_GL_VERSION_OVERRIDE=1.1 timeout 180 "$wine" "$gui" --demo idle --renderer gl --size 1024x700 --frames 5 \
        --screenshot "$winlogs"'\gl11-fallback.png' >"$logs/gui-gl11.log" 2>&1
    rc=$?
    if grep -q "retrying once with wgpu" "$logs/gui-gl11.log" \
        && { [ -s "$logs/gl11-fallback.png" ] || { [ $rc = 4 ] && grep -q "gpu-doctor-cli info" "$logs/gui-gl11.log"; }; }; then
        ok "wine without OpenGL 2+: retried with wgpu, then $([ -s "$logs/gl11-fallback.png" ] && echo "drew the window" || echo "exit 4 naming gpu-doctor-cli")"
    else bad "wine without OpenGL 2+ (exit $rc): $(tail -4 "$logs/gui-gl11.log")"; fi
else skip "Xvfb not installed: no GUI screenshot under Wine"; fi

echo "== under Wine, with the test-only fake NVIDIA driver (nvml.dll, nvcuda.dll)"
packaging/check-wine-gpu.sh "$wine" "$gui" "$cli" "$logs" "target/${GPU_DOCTOR_PROFILE:-dist}/gpu-doctor-cli" || failed=1
exit $failed
