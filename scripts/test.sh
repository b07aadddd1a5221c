#!/usr/bin/env bash
# The project's test command (`npm test`): installs what is missing, builds, lints, and runs
# every suite: Rust unit/property/spec tests natively, the same tables through WASM under Node,
# and the Deno tests (shim units with fakes, integration against moto and s3s-fs on loopback).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
bash scripts/build.sh

log=$(mktemp)
trap 'rm -f "$log"' EXIT
step() { printf '\n== %s\n' "$*" >&2; }

step "cargo fmt --check";            cargo fmt --check
step "cargo clippy (native)";        cargo clippy --all-targets --quiet -- -D warnings
step "cargo clippy (wasm32)";        cargo clippy --target wasm32-unknown-unknown --quiet -- -D warnings
step "test S3 server: fmt, clippy";  cargo fmt --check --manifest-path tools/s3s-server/Cargo.toml &&
                                     cargo clippy --manifest-path tools/s3s-server/Cargo.toml --release --locked --quiet -- -D warnings
step "cargo test";                   cargo test --quiet 2>&1 | tee -a "$log"
step "wasm-pack test --node";        wasm-pack test --node 2>&1 | tee -a "$log"
step "deno fmt --check";             deno fmt --check
step "deno lint";                    deno lint
step "deno check";                   deno check js/ tests/ bench/ scripts/
step "deno test";                    deno test --allow-all --quiet tests/ js/ 2>&1 | tee -a "$log"

# The CLI as users install it (`npm run dist`): the files of CLI-only tests rerun against it.
# Not every CLI test: the long ones (a 5,000-file migrate, lease takeovers, seeded repairs)
# would add minutes and exercise the same entry point.
step "npm run dist";                 bash scripts/dist.sh --allow-missing-runtime
dist_bin=dist/s3sync; [ -x "$dist_bin" ] || dist_bin=dist/s3sync.js
step "deno test (CLI: $dist_bin)"
S3SYNC_BIN="$PWD/$dist_bin" deno test --allow-all --quiet tests/dist/version_test.ts \
  tests/integration/cli_pull_test.ts tests/integration/symlinks_test.ts \
  tests/integration/migrate_safety_test.ts tests/integration/two_way_test.ts \
  tests/integration/v2_safety_test.ts 2>&1 | tee -a "$log"

# One closing line for the whole run, summed over every runner (cargo and wasm-pack print
# "test result: ok. N passed; M failed", deno prints "ok | N passed | M failed").
sed 's/\x1b\[[0-9;]*m//g' "$log" | awk '
  /test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
  /^(ok|FAILED) \| [0-9]+ passed/ { for (i = 1; i <= NF; i++) { if ($i == "passed") p += $(i-1); if ($i == "failed") f += $(i-1) } }
  END { printf "\ntests: %d passed, %d failed\n", p, f }'
