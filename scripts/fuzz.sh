#!/bin/sh
# Runs every fuzz target of tests/fuzz.rs for SECONDS of CPU time each
# (default 600), once per seed of SEEDS (default "0"), JOBS runs at a time
# (default 1), and prints executions and core-hours per target.
#
#   scripts/fuzz.sh 600                          # ten minutes per target, one at a time
#   JOBS=2 SEEDS="1 2" scripts/fuzz.sh 3600      # two seeds per target, an hour each, on two cores
#   TARGETS="pgn kbz" SEEDS="3 4" JOBS=2 scripts/fuzz.sh 1800
#
# Each run draws its mutations from KIBITZ_FUZZ_SEED (printed in its log
# and in target/fuzz/stats.tsv), so runs of one target with different
# seeds try different inputs. The test binary is built once and run
# directly, so editing the sources during a long run changes nothing in it;
# time is counted in CPU seconds, so `nice -n 19 scripts/fuzz.sh` fuzzes on
# idle cores only, and `kill -STOP`/`-CONT` of its processes pause it
# without a false hang. Each run appends its line to the stats when it
# ends: a long campaign cut short keeps its finished runs. Crashing inputs are saved under
# target/fuzz/crashes/ and fail the run; replay one with
# KIBITZ_FUZZ_REPLAY=FILE cargo test --release --test integration fuzz_long_NAME -- --ignored.
set -eu
SECONDS_PER_TARGET=${1:-600}
JOBS=${JOBS:-1}
SEEDS=${SEEDS:-0}
TARGETS=${TARGETS:-fen san pgn moves net kibitz_net kbz}
cd "$(dirname "$0")/.."
BIN=$(cargo test --release --test integration --no-run 2>&1 | tee /dev/stderr |
    sed -n 's/^ *Executable .*(\(.*\))$/\1/p' | tail -n 1)
[ -x "$BIN" ] || { echo "fuzz.sh: no test binary built" >&2; exit 1; }
mkdir -p target/fuzz
STATS=target/fuzz/stats.tsv
: > "$STATS.run"
running=0
for seed in $SEEDS; do
    for target in $TARGETS; do
        (
            KIBITZ_FUZZ_SECONDS=$SECONDS_PER_TARGET KIBITZ_FUZZ_SEED=$seed \
                "$BIN" -q --ignored --nocapture --exact "fuzz::fuzz_long_$target" \
                > "target/fuzz/$target-$seed.log" 2>&1 && echo "$target $seed ok" >> "$STATS.run" \
                || echo "$target $seed FAILED" >> "$STATS.run"
        ) &
        running=$((running + 1))
        if [ "$running" -ge "$JOBS" ]; then
            wait
            running=0
        fi
    done
done
wait
for seed in $SEEDS; do
    for target in $TARGETS; do
        grep "^fuzz " "target/fuzz/$target-$seed.log" || echo "fuzz $target (seed $seed): no report (see target/fuzz/$target-$seed.log)"
    done
done
if grep -q FAILED "$STATS.run"; then
    grep FAILED "$STATS.run"
    exit 1
fi
echo "all targets clean; totals over every run so far (target/fuzz/stats.tsv):"
awk -F'\t' '{e[$1]+=$2; s[$1]+=$3; c[$1]+=$5; if ($6 != "") seeds[$1] = seeds[$1] " " $6}
    END {for (t in e) printf "  %-10s %12d executions %8.2f core-hours %d crashes; seeds:%s\n", t, e[t], s[t]/3600, c[t], seeds[t]}' "$STATS"
