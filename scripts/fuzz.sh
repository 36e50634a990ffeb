#!/bin/sh
# Runs every fuzz target of tests/fuzz.rs for SECONDS each (default 600),
# JOBS at a time (default 1), and prints executions per target.
#
#   scripts/fuzz.sh 600          # ten minutes per target, one at a time
#   JOBS=2 scripts/fuzz.sh 3600  # an hour per target, two at a time
#
# Crashing inputs are saved under target/fuzz/crashes/ and fail the run;
# replay one with KIBITZ_FUZZ_REPLAY=FILE cargo test --release fuzz_long_NAME -- --ignored.
set -eu
SECONDS_PER_TARGET=${1:-600}
JOBS=${JOBS:-1}
cd "$(dirname "$0")/.."
cargo test --release --test integration --no-run
mkdir -p target/fuzz
STATS=target/fuzz/stats.tsv
: > "$STATS.run"
failed=0
running=0
for target in fen san pgn moves net kbz; do
    (
        KIBITZ_FUZZ_SECONDS=$SECONDS_PER_TARGET \
            cargo test --release --test integration -q -- --ignored --nocapture --exact "fuzz::fuzz_long_$target" \
            > "target/fuzz/$target.log" 2>&1 && echo "$target ok" >> "$STATS.run" \
            || echo "$target FAILED" >> "$STATS.run"
    ) &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait
        running=0
    fi
done
wait
for target in fen san pgn moves net kbz; do
    grep "^fuzz $target:" "target/fuzz/$target.log" || echo "fuzz $target: no report (see target/fuzz/$target.log)"
done
if grep -q FAILED "$STATS.run"; then
    grep FAILED "$STATS.run"
    exit 1
fi
echo "all targets clean; totals over every run so far (target/fuzz/stats.tsv):"
awk -F'\t' '{e[$1]+=$2; s[$1]+=$3; c[$1]+=$5} END {for (t in e) printf "  %-6s %12d executions %8.2f hours %d crashes\n", t, e[t], s[t]/3600, c[t]}' "$STATS"
