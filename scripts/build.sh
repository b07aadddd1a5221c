#!/usr/bin/env bash
# Builds pkg/ (the optimised WASM module, its JS glue, and the module embedding its bytes) with
# wasm-pack, when src/ or the embedding script changed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

stamp=pkg/.build-stamp
newest=$(find src Cargo.toml Cargo.lock scripts/embed_wasm.ts -type f -newer "$stamp" 2>/dev/null | head -n 1 || true)
if [ -f "$stamp" ] && [ -z "$newest" ] && [ "${1:-}" != "--force" ]; then
  exit 0
fi
# `--target web`: its glue offers `initSync`, so js/core/wasm.ts instantiates the module from bytes
# embedded in pkg/s3sync_core_wasm.js instead of fetching a file beside the glue at run time.
echo "[build] wasm-pack build --target web --release" >&2
wasm-pack build --target web --release --out-dir pkg --no-pack 2>&1 | grep -v '^\s*$' >&2
deno run --quiet --allow-read=pkg --allow-write=pkg scripts/embed_wasm.ts
touch "$stamp"
