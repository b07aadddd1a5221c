#!/usr/bin/env bash
# Installs everything the build, the tests and the demo need, idempotently: a warm machine
# skips every step in seconds; a fresh one builds the tools once (about 8 minutes).
#
# Tools that outlive a clone (cargo binaries, the moto venv) go to shared places
# ($CARGO_HOME/bin, $S3SYNC_TOOLS) so CI's fresh clones reuse them; npm packages go to the
# clone's node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*" >&2; }

TOOLS="${S3SYNC_TOOLS:-$HOME/.cache/s3sync-core}"
TOOLCHAIN=$(sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml)
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ {getline; gsub(/version = |"/, ""); print; exit}' Cargo.lock)
WASM_PACK_VERSION=0.15.1
# The test S3 server (tools/s3s-server: s3s-fs 0.14.1's storage, Nagle off); its version is
# bumped with every change to it, so a warm machine rebuilds it.
TEST_S3_VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' tools/s3s-server/Cargo.toml | head -1)
MOTO_VERSION=5.2.5

# 1. Rust toolchain with the wasm target (rustup does not auto-install on these machines).
if ! rustup target list --installed --toolchain "$TOOLCHAIN" 2>/dev/null | grep -q '^wasm32-unknown-unknown$' \
  || ! rustup component list --installed --toolchain "$TOOLCHAIN" 2>/dev/null | grep -q '^clippy'; then
  say "installing rust $TOOLCHAIN with rustfmt, clippy and the wasm32 target"
  rustup toolchain install "$TOOLCHAIN" --profile minimal --component rustfmt,clippy \
    --target wasm32-unknown-unknown
fi

# 2. Cargo-installed tools, pinned. wasm-bindgen-cli must match Cargo.lock exactly.
installed() { cargo install --list 2>/dev/null | grep -q "^$1 v$2:"; }
if ! installed wasm-bindgen-cli "$WASM_BINDGEN_VERSION"; then
  say "building wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 2 minutes)"
  # --locked fails for this version on these machines; see ../shared/design.md.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi
if ! installed wasm-pack "$WASM_PACK_VERSION"; then
  say "building wasm-pack $WASM_PACK_VERSION (about 2 minutes)"
  cargo install wasm-pack --version "$WASM_PACK_VERSION" --locked --force
fi
if ! installed s3sync-test-s3 "$TEST_S3_VERSION"; then
  say "building s3sync-test-s3 $TEST_S3_VERSION, the embedded S3 server (about 3 minutes)"
  cargo install --path tools/s3s-server --locked --force
fi

# 3. npm packages: deno, binaryen (its wasm-opt works with wasm-bindgen's externref table,
#    Debian's 108 does not), and the AWS SDK.
if [ ! -x node_modules/.bin/deno ] || [ ! -x node_modules/.bin/wasm-opt ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error
fi

# 4. moto server in a venv, for the integration tests.
if [ ! -x "$TOOLS/moto-venv/bin/moto_server" ] \
  || ! "$TOOLS/moto-venv/bin/python" -c "import moto, sys; sys.exit(moto.__version__ != '$MOTO_VERSION')" 2>/dev/null; then
  say "installing moto[server] $MOTO_VERSION into $TOOLS/moto-venv"
  mkdir -p "$TOOLS"
  python3 -m venv "$TOOLS/moto-venv"
  "$TOOLS/moto-venv/bin/pip" install --quiet "moto[server]==$MOTO_VERSION"
fi

say "tools ready"
