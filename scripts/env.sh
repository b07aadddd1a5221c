# Sourced by the other scripts: puts the project's tools on PATH.
# shellcheck shell=bash
S3SYNC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export S3SYNC_TOOLS="${S3SYNC_TOOLS:-$HOME/.cache/s3sync-core}"
# node_modules/.bin first: wasm-pack must find binaryen's wasm-opt there, not download one.
export PATH="$S3SYNC_ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export MOTO_SERVER_BIN="$S3SYNC_TOOLS/moto-venv/bin/moto_server"
export DENO_NO_UPDATE_CHECK=1
