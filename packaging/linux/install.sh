#!/bin/sh
# Installs gpu-doctor from this unpacked folder, without a package manager.
#
#   ./install.sh             same as --user
#   ./install.sh --user      into ~/.local (bin, applications menu, icons, man pages, completions);
#                            no root needed
#   ./install.sh --system    into /usr/local (run as root)
#   ./install.sh --uninstall [--user|--system]
#                            removes exactly the files an earlier install listed
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mode=user
action=install
for arg in "$@"; do
    case "$arg" in
        --user) mode=user ;;
        --system) mode=system ;;
        --uninstall) action=uninstall ;;
        -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
    esac
done
if [ "$mode" = user ]; then
    bindir="$HOME/.local/bin"
    datadir="${XDG_DATA_HOME:-$HOME/.local/share}"
else
    bindir=/usr/local/bin
    datadir=/usr/local/share
fi
list="$datadir/gpu-doctor/installed-files"
# An icon cache that exists must learn of the change (menus would show no icon); where there is
# none, desktops read the folders directly and none is made.
refresh_icon_cache() {
    if [ -f "$datadir/icons/hicolor/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null 2>&1; then
        gtk-update-icon-cache -q -t "$datadir/icons/hicolor" 2>/dev/null || true
    fi
}

if [ "$action" = uninstall ]; then
    if [ ! -f "$list" ]; then
        echo "install.sh: nothing to remove: $list does not exist (was gpu-doctor installed with --$mode?)" >&2
        exit 1
    fi
    while IFS= read -r f; do rm -f "$f"; done < "$list"
    rm -f "$list"
    rmdir "$datadir/gpu-doctor" 2>/dev/null || true
    refresh_icon_cache
    echo "gpu-doctor removed from $bindir and $datadir."
    exit 0
fi

mkdir -p "$bindir" "$datadir/gpu-doctor"
: > "$list.new"
put() { # put SOURCE DEST_DIR MODE: copies one file and lists it
    mkdir -p "$2"
    dest="$2/$(basename "$1")"
    cp "$1" "$dest.tmp.$$" && chmod "$3" "$dest.tmp.$$" && mv -f "$dest.tmp.$$" "$dest"
    echo "$dest" >> "$list.new"
}
put "$here/bin/gpu-doctor" "$bindir" 755
put "$here/bin/gpu-doctor-cli" "$bindir" 755
# Menus may not have ~/.local/bin on PATH: the launcher names the program by its full path.
desktop=io.github.gpu_doctor.GpuDoctor.desktop
mkdir -p "$datadir/applications"
sed "s|^Exec=gpu-doctor\$|Exec=\"$bindir/gpu-doctor\"|" "$here/share/applications/$desktop" > "$datadir/applications/$desktop"
echo "$datadir/applications/$desktop" >> "$list.new"
put "$here/share/metainfo/io.github.gpu_doctor.GpuDoctor.metainfo.xml" "$datadir/metainfo" 644
(cd "$here/share" && find icons man bash-completion zsh fish -type f) | while IFS= read -r f; do
    put "$here/share/$f" "$datadir/$(dirname "$f")" 644
done
mv -f "$list.new" "$list"
refresh_icon_cache
echo "gpu-doctor installed: $(wc -l < "$list") files under $bindir and $datadir."
echo "Start it from the applications menu (System > gpu-doctor) or run: gpu-doctor"
case ":$PATH:" in
    *":$bindir:"*) ;;
    *) echo "Note: $bindir is not on your PATH; add it to run gpu-doctor-cli from a terminal." ;;
esac
if [ "$mode" = user ]; then
    echo "zsh completions are in $datadir/zsh/site-functions (add it to fpath)."
fi
