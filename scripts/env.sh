# Sourced by the other scripts and bin/s3sync: puts the project's tools on PATH.
# shellcheck shell=bash
S3SYNC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export S3SYNC_TOOLS="${S3SYNC_TOOLS:-$HOME/.cache/s3sync-core}"
export MOTO_SERVER_BIN="$S3SYNC_TOOLS/moto-venv/bin/moto_server"
export DENO_NO_UPDATE_CHECK=1

# The npm package's `deno` command is a Node launcher that runs the real binary as a child, so
# a signal sent to it (a kill, a Ctrl-C) would orphan the real process. Put the real binary first
# on PATH instead.
_s3sync_bin="$S3SYNC_ROOT/node_modules/.s3sync-bin"
if [ ! -x "$_s3sync_bin/deno" ] || [ -L "$_s3sync_bin/deno" ]; then
  # Deno's own npm handling ("nodeModulesDir": "auto") may re-lay node_modules under
  # node_modules/.deno/ mid-run, so keep a hard link (or copy) of the binary, not a symlink.
  for _candidate in "$S3SYNC_ROOT"/node_modules/@deno/*/deno "$S3SYNC_ROOT/node_modules/deno/deno" \
    "$S3SYNC_ROOT"/node_modules/.deno/@deno+*/node_modules/@deno/*/deno \
    "$S3SYNC_ROOT"/node_modules/.deno/deno@*/node_modules/deno/deno; do
    if [ -x "$_candidate" ] && [ -f "$_candidate" ]; then
      mkdir -p "$_s3sync_bin" && rm -f "$_s3sync_bin/deno" &&
        { ln "$(readlink -f "$_candidate")" "$_s3sync_bin/deno" 2>/dev/null ||
          cp "$(readlink -f "$_candidate")" "$_s3sync_bin/deno"; }
      break
    fi
  done
fi
# node_modules/.bin next: wasm-pack must find binaryen's wasm-opt there, not download one.
export PATH="$_s3sync_bin:$S3SYNC_ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
unset _s3sync_bin _candidate
