#!/usr/bin/env bash
# `npm run bench` (not part of `npm test`): the benchmark suite of issue 7. Sets up and builds
# like the other scripts, installs rclone (the peer it is compared with) if missing, then runs
# the five stages and renders bench/results.json, bench/RESULTS.md and bench/plan-time.svg.
# Scratch data goes to bench/work/ (gitignored). Takes roughly 20-30 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
bash scripts/build.sh

say() { printf '\n== %s\n' "$*" >&2; }

if ! command -v rclone >/dev/null; then
  say "installing rclone (Debian's package)"
  apt-get update -qq
  apt-get install -y -qq rclone >/dev/null
fi

mkdir -p bench/work
# What is measured: the commit, and any uncommitted edits to the code, taken now (the tree may
# move while the suite runs; pkg/ was just built from it).
{
  printf '{"commit": "%s", "startedAt": "%s", "uncommitted": [' \
    "$(git rev-parse --short HEAD)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  git status --porcelain -- src js Cargo.toml Cargo.lock | sed 's/"/\\"/g; s/.*/"&"/' | paste -sd, -
  printf ']}\n'
} > bench/work/meta.json
# Fresh criterion output only: stale estimates from an older run must not reach the report.
rm -rf target/criterion
say "1. cargo bench --bench planner (native core)"
cargo bench --bench planner
deno run --allow-all --quiet bench/criterion.ts

say "2. plan benchmark: WASM core vs TypeScript baseline"
deno run --allow-all --quiet bench/plan_bench.ts

say "3. whole syncs on s3s-fs: s3sync vs rclone vs the bare SDK loop"
# The CLI rows run the CLI as users install it: the one-file bundle `npm run dist` builds (or the
# compiled binary, where a compile runtime was at hand).
bash scripts/dist.sh --allow-missing-runtime
S3SYNC_BIN="$PWD/dist/s3sync.js"; [ -x dist/s3sync ] && S3SYNC_BIN="$PWD/dist/s3sync"
S3SYNC_BIN="$S3SYNC_BIN" deno run --allow-all --quiet bench/sync_bench.ts

say "4. extension-shaped scenarios (this project's service; the extension's beside it is a local run)"
deno run --allow-all --quiet bench/ext_shape_bench.ts

say "5. tracing overhead: this tree with tracing off and on vs the code before tracing"
# The reference is the last commit without tracing (ca4d99c), in a worktree with its own pkg/.
rm -rf bench/work/base && git worktree prune
git worktree add --detach -f bench/work/base ca4d99c >/dev/null
(cd bench/work/base && bash scripts/build.sh >/dev/null)
deno run --allow-all --quiet bench/trace_overhead.ts --base bench/work/base
git worktree remove --force bench/work/base

say "render"
deno run --allow-all --quiet bench/render.ts
# The generated files in the repository's format, so `deno fmt --check` stays clean.
deno fmt --quiet bench/
