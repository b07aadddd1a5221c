#!/usr/bin/env bash
# Builds pkg/ (the optimised WASM module and its JS glue) with wasm-pack, when src/ changed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

stamp=pkg/.build-stamp
newest=$(find src Cargo.toml Cargo.lock -type f -newer "$stamp" 2>/dev/null | head -n 1 || true)
if [ -f "$stamp" ] && [ -z "$newest" ] && [ "${1:-}" != "--force" ]; then
  exit 0
fi
echo "[build] wasm-pack build --target deno --release" >&2
wasm-pack build --target deno --release --out-dir pkg --no-pack 2>&1 | grep -v '^\s*$' >&2
touch "$stamp"
