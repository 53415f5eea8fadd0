#!/usr/bin/env bash
# Fetches the MicroPython v1.9.2 core (py/, extmod/) from Debian's source package
# firmware-microbit-micropython into DEST (default build/micropython-src), once. The sources are
# never committed: this script is how a fresh clone gets them. Needs apt-get, dpkg-source (dpkg-dev)
# and a deb-src entry; it adds one beside the machine's debian.sources when none exists.
set -euo pipefail
dest=${1:-build/micropython-src}
package=firmware-microbit-micropython
marker=$dest/.complete

[[ -f $marker ]] && exit 0

sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"

has_deb_src() { apt-get indextargets --format '$(CREATED_BY)' 2>/dev/null | grep -qx Sources; }

add_deb_src() {
  local sources=/etc/apt/sources.list.d/debian.sources
  [[ -f $sources ]] || { echo "fetch-source: no $sources to copy a deb-src entry from; add one by hand (docs/python.md)" >&2; exit 1; }
  echo "fetch-source: adding a deb-src entry (/etc/apt/sources.list.d/debian-src.sources)"
  sed -e 's/^Types:.*/Types: deb-src/' "$sources" | $sudo tee /etc/apt/sources.list.d/debian-src.sources >/dev/null
  $sudo apt-get update -qq
}

has_deb_src || add_deb_src
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp" "$(dirname "$dest")"
echo "fetch-source: apt-get source $package into $dest"
(cd "$dest.tmp" && apt-get source -qq "$package" >/dev/null)
unpacked=$(find "$dest.tmp" -mindepth 1 -maxdepth 1 -type d | head -1)
[[ -n $unpacked ]] || { echo "fetch-source: apt-get source gave no directory" >&2; exit 1; }
rm -rf "$dest"
mv "$unpacked" "$dest"
rm -rf "$dest.tmp"
touch "$marker"
