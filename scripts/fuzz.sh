#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/fuzz_targets/) for a while, one after the other.
#
#   npm run fuzz                          # each target for 30 s (a smoke run, ~4 minutes)
#   FUZZ_SECONDS=600 npm run fuzz         # the long run: 10 minutes per target (~70 minutes)
#   bash scripts/fuzz.sh push_plan        # only the named targets
#   FUZZ_UPDATE_CORPUS=1 FUZZ_SECONDS=600 npm run fuzz
#                                         # also merge what the run found into fuzz/corpus/
#                                         # and minimise it (cargo fuzz cmin)
#
# The committed corpus (fuzz/corpus/<target>/) is read, never written, unless
# FUZZ_UPDATE_CORPUS=1: new inputs go to fuzz/target/corpus-work/<target>/, crashes to
# fuzz/artifacts/<target>/ (both gitignored). One fuzzer process at a time, niced: the machines
# are shared. (`-jobs=1` is not passed: in libFuzzer it means "fork one child that logs to
# fuzz-0.log and stops at its first crash", not "one thread"; a plain run is one process.)
#
# Needs the nightly toolchain (installed here when absent) and cargo-fuzz (installed when
# absent). Exits non-zero when any target found a crash; the summary names the artifacts.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
SECONDS_PER_TARGET="${FUZZ_SECONDS:-30}"
UPDATE_CORPUS="${FUZZ_UPDATE_CORPUS:-0}"
ALL_TARGETS=(index_v1 index_v2 listing_rebuild path_classify pull_plan push_plan sidecar_lock)
if [ "$#" -gt 0 ]; then
  TARGETS=("$@")
else
  TARGETS=("${ALL_TARGETS[@]}")
fi

if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz: installing the nightly toolchain (cargo-fuzz needs it)" >&2
  rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked
fi

cd "$ROOT/fuzz"
echo "fuzz: building ${#TARGETS[@]} targets (nightly, address sanitizer, debug assertions)" >&2
for target in "${TARGETS[@]}"; do
  nice cargo +nightly fuzz build "$target" >&2
done

LOGS="$ROOT/fuzz/target/fuzz-logs"
mkdir -p "$LOGS"
summary=()
failed=()
for target in "${TARGETS[@]}"; do
  corpus="corpus/$target"
  work="target/corpus-work/$target"
  artifacts="artifacts/$target/"
  mkdir -p "$corpus" "$work" "$artifacts"
  log="$LOGS/$target.log"
  echo "fuzz: $target for ${SECONDS_PER_TARGET}s (log: fuzz/target/fuzz-logs/$target.log)" >&2
  started=$(date +%s)
  status=0
  # New inputs go to the first corpus folder (the work copy); the committed one is only read.
  nice cargo +nightly fuzz run "$target" "$work" "$corpus" -- \
    -max_total_time="$SECONDS_PER_TARGET" \
    -timeout=10 \
    -print_final_stats=1 \
    -artifact_prefix="$artifacts" >"$log" 2>&1 || status=$?
  elapsed=$(($(date +%s) - started))
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  if [ "$status" -eq 0 ]; then
    result="ok"
  else
    result="failed (exit $status)"
    failed+=("$target")
    grep -E "panicked at|^(SUMMARY|ERROR):|Test unit written to" "$log" | head -8 >&2 || true
  fi
  if [ "$UPDATE_CORPUS" = "1" ] && [ "$status" -eq 0 ]; then
    # Add what raised coverage, then minimise the committed corpus in place: the smallest set
    # of inputs that covers the same edges (hit counts ignored), which keeps it to a few
    # hundred KiB per target. The hand-written seeds (fuzz/seeds.py) are put back afterwards.
    nice cargo +nightly fuzz run "$target" "$corpus" "$work" -- -merge=1 >>"$log" 2>&1
    nice cargo +nightly fuzz cmin "$target" "$corpus" -- -set_cover_merge=1 -use_counters=0 >>"$log" 2>&1
    python3 "$ROOT/fuzz/seeds.py" >/dev/null
  fi
  files=$(find "$corpus" -type f | wc -l)
  summary+=("| $target | $elapsed | ${runs:-?} | $files | $result |")
done

echo
echo "| target | seconds | executions | corpus files | result |"
echo "| --- | ---: | ---: | ---: | --- |"
printf '%s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: crashes in ${failed[*]}; inputs under fuzz/artifacts/, logs under fuzz/target/fuzz-logs/" >&2
  exit 1
fi
