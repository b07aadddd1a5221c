#!/usr/bin/env bash
# Builds the Node package in npm/: js/core/mod.ts (the typed planner API) bundled with the WASM
# glue and the module's embedded bytes into one ES module, npm/core.js, with its declarations
# beside it. Nothing in it needs Deno or a .wasm file beside it: Node 20+ runs it as is.
# Needs pkg/ (scripts/build.sh). `npm pack` in npm/ then makes the tarball.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

stamp=npm/.build-stamp
newest=$(find js/core/mod.ts js/core/errors.ts js/core/codes.ts js/core/wasm.ts pkg/s3sync_core.js pkg/s3sync_core_wasm.js \
  -newer "$stamp" 2>/dev/null | head -n 1 || true)
if [ -f "$stamp" ] && [ -f npm/core.js ] && [ -z "$newest" ] && [ "${1:-}" != "--force" ]; then
  exit 0
fi
echo "[build] deno bundle js/core/mod.ts -> npm/core.js" >&2
# `browser` platform: the output references no Deno or Node built-in, only web APIs Node has.
deno bundle --quiet --platform browser --format esm --declaration -o npm/core.js js/core/mod.ts
touch "$stamp"
