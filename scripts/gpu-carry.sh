#!/usr/bin/env bash
# Makes the two ignored folders a lent GPU host needs, within the 64 MiB a call carries with the tree:
#
#   scripts/gpu-carry.sh [LINE]     # LINE defaults to 22, the oldest supported Node line
#
#   .gpu/         ../shared/gpu/pack's folder, packed with that supported Node line (pack carries the
#                 `node` on PATH, which here may be an unsupported one), its node_modules then packed
#                 again without the packages only this machine's tools use (mutation testing,
#                 formatting, docs): pack's own tarball and a Node are over the limit with the rest
#   .gpu-redis/   Debian's redis-server and the two libraries it needs beside it (apt-get download,
#                 dpkg -x), started through a wrapper that points the loader at them: the queue tests
#                 and benches find it there (tools/gpu-suite.sh exports TSCUDA_REDIS_SERVER)
#
# Then run with carry [".gpu", ".gpu-redis"] and a command that starts
# `source .gpu/enter.sh && tools/gpu-suite.sh ...`. Run again after dependencies change.
set -euo pipefail
line=${1:-22}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -d node_modules ] || npm ci
PATH="$(scripts/node-line.sh "$line"):$PATH" ../shared/gpu/pack
# pack rewrites its tarball when the dependencies change (its modules.stamp): slimmed once per stamp.
if [ "$(cat .gpu/modules.slim 2>/dev/null)" != "$(cat .gpu/modules.stamp)" ]; then
  # pack's own exclusions, and the packages only this machine's tools use: the GPU host never runs them.
  TOOL_ONLY=(typescript @typescript ts-morph @ts-morph 'lightningcss*' .cache @stryker-mutator rxjs zod underscore
    @babel prettier caniuse-lite weapon-regex typedoc)
  excludes=()
  for p in "${TOOL_ONLY[@]}"; do excludes+=("--exclude=node_modules/$p"); done
  tar -cf - "${excludes[@]}" node_modules | xz -T0 -6 > .gpu/modules.tar.xz.tmp
  mv .gpu/modules.tar.xz.tmp .gpu/modules.tar.xz
  cp .gpu/modules.stamp .gpu/modules.slim
fi

if [ ! -x .gpu-redis/redis-server ]; then
  work=$(mktemp -d)
  (cd "$work" && apt-get download redis-server redis-tools libjemalloc2 liblzf1 > /dev/null)
  for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/x"; done
  mkdir -p .gpu-redis/lib
  cp "$work/x/usr/bin/redis-server" .gpu-redis/redis-server.bin
  cp -L "$work"/x/usr/lib/x86_64-linux-gnu/{libjemalloc.so.2,liblzf.so.1} .gpu-redis/lib/
  cat > .gpu-redis/redis-server <<'EOS'
#!/usr/bin/env bash
# Debian's redis-server, extracted with dpkg -x, with its two libraries beside it.
here=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/redis-server.bin" "$@"
EOS
  chmod +x .gpu-redis/redis-server
  rm -rf "$work"
  grep -qxF '/.gpu-redis/' .git/info/exclude || echo '/.gpu-redis/' >> .git/info/exclude
fi
.gpu-redis/redis-server --version > /dev/null
carried=$(du -cb .gpu .gpu-redis | tail -1 | cut -f1)
tree=$(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1)
total=$(((carried + tree) / 1048576))
echo "gpu-carry: .gpu (Node $(cat .gpu/node.version)) and .gpu-redis with the tracked tree: ${total} MiB of the 64 a call carries"
[ "$total" -lt 64 ] || { echo "gpu-carry: over the limit" >&2; exit 1; }
