#!/usr/bin/env bash
# `npm start`: sets up what is missing, builds, and runs the narrated demo against an embedded
# S3 server (s3s-fs on 127.0.0.1, data under .demo/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
bash scripts/build.sh
exec deno run --allow-all --quiet scripts/demo.ts "$@"
