#!/usr/bin/env bash
# Builds every artifact a user would download into target/dist/packages/, with SHA256SUMS and a
# manifest (file, size, what it is):
#   Linux:   gpu-doctor_<v>-1_amd64.deb, gpu-doctor-<v>-1.x86_64.rpm,
#            gpu-doctor-<v>-x86_64-linux.tar.gz (with install.sh --user)
#   Windows: gpu-doctor-<v>-windows-x64-setup.exe (per-user installer),
#            gpu-doctor-<v>-windows-x64.zip (portable)
#
# Usage: packaging/build.sh [--linux] [--windows]   (both when neither is given)
# Needs: cargo-deb and cargo-generate-rpm (cargo install), gzip; for Windows the
# x86_64-pc-windows-gnu target, mingw-w64 and makensis (nsis). A part whose tools are missing is
# skipped with a SKIP line saying why, and the script ends with status 3 so nothing goes unnoticed.
#
# GPU_DOCTOR_PROFILE picks the cargo profile the programs are built with (default: dist, the
# release one). CI sets it to `ci`, the profile its tests were built and run with, and sets
# GPU_DOCTOR_PREBUILT=1: the Linux programs it tested are packaged as they are, with no second
# compile, and the Windows ones it built while the tests ran (in GPU_DOCTOR_WINDOWS_TARGET_DIR)
# likewise.
set -euo pipefail
cd "$(dirname "$0")/.."
want_linux=0 want_windows=0
for a in "$@"; do
    case "$a" in
        --linux) want_linux=1 ;;
        --windows) want_windows=1 ;;
        *) echo "usage: packaging/build.sh [--linux] [--windows]" >&2; exit 2 ;;
    esac
done
[ $# -eq 0 ] && want_linux=1 want_windows=1
profile=${GPU_DOCTOR_PROFILE:-dist}
prebuilt=${GPU_DOCTOR_PREBUILT:-0}

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
id=io.github.gpu_doctor.GpuDoctor
dist=target/dist
out=$dist/packages
skipped=0
start=$(date +%s)
step() { echo "== $* ($(( $(date +%s) - start )) s)"; }
skip() { echo "SKIP: $*"; skipped=1; }

grep -q "<release version=\"$version\"" "packaging/linux/$id.metainfo.xml" || {
    echo "packaging/linux/$id.metainfo.xml has no <release version=\"$version\">: add this release to it" >&2
    exit 1
}
head -1 packaging/linux/changelog | grep -q "^gpu-doctor ($version-1) " || {
    echo "packaging/linux/changelog does not start with an entry for $version-1: add one" >&2
    exit 1
}
rm -rf "$out" "$dist/assets" "$dist/stage"
mkdir -p "$out"

if [ $want_linux = 1 ]; then
    bin=target/$profile
    if [ "$prebuilt" = 1 ] && [ -x "$bin/gpu-doctor" ] && [ -x "$bin/gpu-doctor-cli" ] && [ -x "$bin/examples/package-assets" ]; then
        step "Linux binaries: the ones built and tested in profile $profile (no second compile)"
    else
        step "Linux binaries (profile $profile) and the man page and completion writer"
        # One build: the example links the same library (a separate `cargo run` would build the
        # whole dependency tree again in the dev profile).
        cargo build -p gpu-doctor --profile "$profile" --locked --bins --example package-assets
    fi
    step "man pages and shell completions from the argument definitions"
    "$bin/examples/package-assets" "$dist/assets"
    gzip -9n "$dist"/assets/man/*.1

    if command -v cargo-deb >/dev/null; then
        step ".deb"
        cargo deb -p gpu-doctor --no-build --profile "$profile" --output "$out/"
    else
        skip ".deb not built: cargo-deb is not installed (cargo install cargo-deb)"
    fi
    if command -v cargo-generate-rpm >/dev/null; then
        step ".rpm"
        # (The metadata names target/release/; the programs of any profile are put there in a
        # target directory of their own, which every version of the tool reads.)
        rpm_dir=$dist/rpm-target
        rm -rf "$rpm_dir" && mkdir -p "$rpm_dir/release"
        cp "$bin/gpu-doctor" "$bin/gpu-doctor-cli" "$rpm_dir/release/"
        cargo generate-rpm --target-dir "$rpm_dir" --output "$out/"
    else
        skip ".rpm not built: cargo-generate-rpm is not installed (cargo install cargo-generate-rpm)"
    fi

    step "portable .tar.gz with install.sh"
    name=gpu-doctor-$version-x86_64-linux
    stage=$dist/stage/$name
    mkdir -p "$stage/bin" "$stage/share/applications" "$stage/share/metainfo" "$stage/share/man/man1" \
        "$stage/share/bash-completion/completions" "$stage/share/zsh/site-functions" \
        "$stage/share/fish/vendor_completions.d"
    install -m 755 -s "$bin/gpu-doctor" "$bin/gpu-doctor-cli" "$stage/bin/"
    install -m 644 "packaging/linux/$id.desktop" "$stage/share/applications/"
    install -m 644 "packaging/linux/$id.metainfo.xml" "$stage/share/metainfo/"
    cp -r packaging/icons "$stage/share/icons"
    install -m 644 "$dist"/assets/man/*.1.gz "$stage/share/man/man1/"
    install -m 644 "$dist"/assets/completions/*.bash "$stage/share/bash-completion/completions/"
    install -m 644 "$dist"/assets/completions/_* "$stage/share/zsh/site-functions/"
    install -m 644 "$dist"/assets/completions/*.fish "$stage/share/fish/vendor_completions.d/"
    install -m 755 packaging/linux/install.sh "$stage/"
    install -m 644 README.md LICENSE-MIT LICENSE-APACHE "$stage/"
    install -m 644 assets/fonts/LICENSE-OFL.txt "$stage/LICENSE-OFL-NotoSansSC.txt"
    install -m 644 assets/fonts/LICENSE-emoji-icon-font.txt "$stage/"
    tar -C "$dist/stage" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" "$name"
fi

if [ $want_windows = 1 ]; then
    target=x86_64-pc-windows-gnu
    if ! rustup target list --installed 2>/dev/null | grep -qx $target && ! rustup target add $target >/dev/null 2>&1; then
        skip "Windows not built (nor its code linted): the $target target could not be installed"
    elif ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
        skip "Windows not built (nor its code linted): no mingw-w64 compiler (apt-get install gcc-mingw-w64-x86-64)"
    else
        # (GPU_DOCTOR_WINDOWS_TARGET_DIR: the target directory they were built in beforehand, as CI
        # builds them while its tests run.)
        win=${GPU_DOCTOR_WINDOWS_TARGET_DIR:-target}/$target/$profile
        if [ "$prebuilt" = 1 ] && [ -f "$win/gpu-doctor.exe" ] && [ -f "$win/gpu-doctor-cli.exe" ]; then
            step "Windows executables: the ones built in profile $profile beforehand ($win)"
        else
            step "Windows executables (profile $profile, $target)"
            CARGO_TARGET_DIR=${GPU_DOCTOR_WINDOWS_TARGET_DIR:-target} cargo build -p gpu-doctor --profile "$profile" --locked --bins --target $target
        fi
        name=gpu-doctor-$version-windows-x64
        stage=$dist/stage/$name
        mkdir -p "$stage"
        cp "$win/gpu-doctor.exe" "$win/gpu-doctor-cli.exe" "$stage/"
        # (A profile with debug information, as CI's, ships the programs without it.)
        if [ "$profile" != dist ] && command -v x86_64-w64-mingw32-strip >/dev/null; then
            x86_64-w64-mingw32-strip "$stage/gpu-doctor.exe" "$stage/gpu-doctor-cli.exe"
        fi
        # Windows readers: CRLF text files with a .txt name.
        sed 's/$/\r/' README.md > "$stage/README.txt"
        sed 's/$/\r/' LICENSE-MIT > "$stage/LICENSE-MIT.txt"
        sed 's/$/\r/' LICENSE-APACHE > "$stage/LICENSE-APACHE.txt"
        sed 's/$/\r/' assets/fonts/LICENSE-OFL.txt > "$stage/LICENSE-OFL-NotoSansSC.txt"
        sed 's/$/\r/' assets/fonts/LICENSE-emoji-icon-font.txt > "$stage/LICENSE-emoji-icon-font.txt"
        step "portable .zip"
        (cd "$dist/stage" && python3 -m zipfile -c "../packages/$name.zip" "$name")
        if command -v makensis >/dev/null; then
            step "installer (NSIS)"
            cp packaging/windows/gpu-doctor.ico "$stage/"
            makensis -V2 -DVERSION="$version" -DSRC="$(pwd)/$stage" -DOUTFILE="$(pwd)/$out/$name-setup.exe" \
                packaging/windows/installer.nsi
            rm "$stage/gpu-doctor.ico"
        else
            skip "Windows installer not built: makensis is not installed (apt-get install nsis)"
        fi
    fi
fi

step "checksums and manifest"
(
    cd "$out"
    {
        printf 'file\tbytes\twhat\n'
        for f in *; do
            [ "$f" = SHA256SUMS ] || [ "$f" = MANIFEST.tsv ] && continue
            case "$f" in
                *.deb) what="Debian/Ubuntu package: both programs, menu entry, icons, man pages, completions" ;;
                *.rpm) what="Fedora/openSUSE/RHEL package: the same files as the .deb" ;;
                *linux.tar.gz) what="portable Linux folder; ./install.sh --user puts it under ~/.local" ;;
                *setup.exe) what="Windows installer, per user, no administrator rights" ;;
                *.zip) what="portable Windows folder: gpu-doctor.exe (window) and gpu-doctor-cli.exe (console)" ;;
                *) what="" ;;
            esac
            printf '%s\t%s\t%s\n' "$f" "$(stat -c %s "$f")" "$what"
        done
    } > ../MANIFEST.tsv
    mv ../MANIFEST.tsv MANIFEST.tsv
    shopt -s nullglob
    sha256sum -- *.deb *.rpm *.tar.gz *.zip *.exe MANIFEST.tsv > SHA256SUMS
)
column -t -s $'\t' "$out/MANIFEST.tsv"
step "done: $out"
[ $skipped = 0 ] || exit 3
