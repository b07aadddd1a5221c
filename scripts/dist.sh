#!/usr/bin/env bash
# `npm run dist`: builds what a user installs, into dist/ (not committed):
#   dist/s3sync.js            the CLI as one JavaScript file: js/cli.ts with the AWS SDK and the
#                             WASM module's bytes inlined; runs with `deno` alone (no checkout,
#                             node_modules or Rust). It is also what deno compile embeds.
#   dist/s3sync               the single-binary CLI (`deno compile` of dist/s3sync.js).
#   dist/s3sync-core-V.tgz    the Node package (npm/, see scripts/build_npm.sh), packed.
# The Deno package is the repository itself (deno.json `exports`); `deno publish` uploads it.
#
# deno compile joins the script to `denort`, Deno's runtime binary, which it downloads from
# Deno's release server unless DENORT_BIN names a local copy. Where neither works (no network
# but the package registries), `--allow-missing-runtime` builds the rest, says so, and exits 0;
# without it that is an error.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

allow_missing_runtime=false
[ "${1:-}" = "--allow-missing-runtime" ] && allow_missing_runtime=true

bash scripts/build.sh
bash scripts/build_npm.sh
mkdir -p dist
version=$(sed -n 's/^export const VERSION = "\(.*\)";$/\1/p' js/version.ts)

# Permissions the CLI needs: the same set bin/s3sync grants. V8 compiles each WASM function on
# its first call rather than the whole module at start-up (about 4 ms off every run), and starts
# the young generation at 16 MB (fewer scavenges during start-up; see bin/s3sync).
perms=(--allow-env --allow-read --allow-write --allow-net --allow-sys)
v8=(--v8-flags=--wasm-lazy-compilation,--min-semi-space-size=16)

echo "[dist] deno bundle js/cli.ts -> dist/s3sync.js" >&2
deno bundle --quiet --platform deno -o dist/s3sync.js.tmp js/cli.ts
{
  echo "#!/usr/bin/env -S deno run --quiet --no-config --no-lock --node-modules-dir=none ${v8[*]} ${perms[*]}"
  # The SDK's CommonJS parts require Node built-ins (node:crypto, ...) at run time; the
  # bundle's require shim uses a real `require` when one is in scope.
  echo 'import { createRequire as __s3syncCreateRequire } from "node:module";'
  echo 'const require = __s3syncCreateRequire(import.meta.url);'
  cat dist/s3sync.js.tmp
} > dist/s3sync.js.tmp2
rm dist/s3sync.js.tmp
chmod +x dist/s3sync.js.tmp2
mv dist/s3sync.js.tmp2 dist/s3sync.js

echo "[dist] npm pack npm/ -> dist/" >&2
rm -f dist/s3sync-core-*.tgz
(cd npm && npm pack --quiet --pack-destination ../dist >/dev/null)

echo "[dist] deno compile dist/s3sync.js -> dist/s3sync" >&2
rm -f dist/s3sync
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if deno compile --quiet --no-config --no-lock --node-modules-dir=none "${v8[@]}" "${perms[@]}" \
  --output dist/s3sync dist/s3sync.js >"$log" 2>&1; then
  echo "[dist] dist/s3sync $version: $(du -h dist/s3sync | cut -f1)" >&2
else
  plain=$(sed 's/\x1b\[[0-9;]*m//g' "$log")
  reason=$(grep -m1 'error sending request' <<<"$plain" || grep -m1 'error:' <<<"$plain" || true)
  reason=$(sed "s/^ *[0-9]*: *//" <<<"$reason")
  echo "[dist] deno compile failed: it needs Deno's runtime binary (denort) for this platform," >&2
  echo "[dist]   downloaded from Deno's release server, or named by DENORT_BIN=/path/to/denort." >&2
  echo "[dist]   ${reason:-see below}" >&2
  if [ "$allow_missing_runtime" = true ]; then
    echo "[dist] built without dist/s3sync: dist/s3sync.js is the same CLI for \`deno\`." >&2
  else
    cat "$log" >&2
    exit 1
  fi
fi
ls -l dist >&2
