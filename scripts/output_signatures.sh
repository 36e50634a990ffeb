#!/usr/bin/env bash
# The sha256 of what every command writes, on the shared Lichess 2016-05
# games: run it before and after a change that should not change any byte
# (a refactoring), and diff the two lists.
#
#   scripts/output_signatures.sh [KIBITZ] > before.txt
#
# KIBITZ defaults to target/release/kibitz. Needs ../shared/data (or
# KIBITZ_DATA); the engine and net rows need Debian's Stockfish and its
# exported net in target/nn-ad9b42354671.nnue, and are left out (with a
# line saying so) when either is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
K=$(realpath "${1:-target/release/kibitz}")
DATA=$(realpath "${KIBITZ_DATA:-../shared/data}")
NET=$(realpath -m target/nn-ad9b42354671.nnue)
GAMES=$DATA/pgn/lichess/lichess-org_database_2016-05.pgn.zst
EVALS=$DATA/pgn/lichess/lichess_api_export_AlPhA_ZeRo_1925_2026-04-19.pgn
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# Outputs name their inputs (headers, reports): the same names every run.
cd "$W"

sig() { printf '%s %s\n' "$(sha256sum < "$2" | cut -c1-16)" "$1"; }
q() { "$K" "$@" >/dev/null 2>&1; }

# annotate: the search, the net, [%eval], an engine; sharded and merged
q annotate "$GAMES" -o "search.kbz" -d 3 -j 2
sig "annotate search -d 3" "search.kbz"
q annotate "$GAMES" -o "pv.kbz" -d 2 -j 2 --preset analysis --max-games 300
sig "annotate --preset analysis -d 2" "pv.kbz"
q annotate "$GAMES" -o first.kbz -d 2 -j 2 --dedup
sig "annotate -d 2 --dedup (first)" first.kbz
q annotate "$GAMES" -o "deep.kbz" -d 4 -j 2 --max-games 600 --dedup deepest
sig "annotate -d 4 --dedup deepest" "deep.kbz"
q annotate "$GAMES" -o "last.kbz" -d 2 -j 2 --max-games 600 --dedup last --dedup-memory 1
sig "annotate -d 2 --dedup last (spilled)" "last.kbz"
q annotate "$GAMES" -o filtered.kbz -d 2 -j 2 --min-elo 1500 --max-avg-elo 2200 \
    --speed blitz,bullet --date-from 2016-05-02 --termination Normal --result 1-0,0-1
sig "annotate -d 2 with game filters" filtered.kbz
q annotate "$EVALS" -o "evals.kbz" --label pgn-eval --preset analysis
sig "annotate --label pgn-eval" "evals.kbz"
for k in 0 1 2; do
    q annotate "$GAMES" -o "shard$k.kbz" -d 3 -j 2 --shard "$k/3"
done
q merge "shard0.kbz" "shard1.kbz" "shard2.kbz" -o "merged.kbz"
sig "merge of 3 shards" "merged.kbz"
cmp -s "merged.kbz" "search.kbz" && echo "merge of 3 shards equals the unsharded run" \
    || echo "merge of 3 shards DIFFERS from the unsharded run"
if [ -f "$NET" ]; then
    q annotate "$GAMES" -o "net.kbz" -d 3 -j 2 --net "$NET" --max-games 400
    sig "annotate --net -d 3" "net.kbz"
else
    echo "NOT RUN: annotate --net (no $NET)"
fi
if [ -x /usr/games/stockfish ]; then
    q annotate "$GAMES" -o "engine.kbz" -d 5 -j 2 --engine /usr/games/stockfish \
        --engine-option Threads=1 --max-games 40
    sig "annotate --engine stockfish -d 5" "engine.kbz"
else
    echo "NOT RUN: annotate --engine (no /usr/games/stockfish)"
fi

# relabel: a .kbz labelled again, and an exported plain file read back
q annotate "search.kbz" -o "relabel.kbz" -d 2 -j 2
sig "relabel .kbz -d 2" "relabel.kbz"
q export "search.kbz" --format plain -o "search.plain"
q annotate "search.plain" -o "relabel-plain.kbz" -d 2 -j 2
sig "relabel .plain -d 2" "relabel-plain.kbz"
q export "search.kbz" --format binpack -o "search.binpack"
q annotate "search.binpack" -o "relabel-binpack.kbz" -d 2 -j 2
sig "relabel .binpack -d 2" "relabel-binpack.kbz"

# every position labelled: 1,024 games hold more than a block's 32,768 labels
q annotate "$GAMES" -o every.kbz -d 1 -j 2 --preset analysis
sig "annotate --preset analysis -d 1, every game" every.kbz
q annotate every.kbz -o every-relabel.kbz -d 1 -j 2
sig "relabel of it -d 1" every-relabel.kbz
q dedup every.kbz -o every-dedup.kbz
sig "dedup of it" every-dedup.kbz

# dedup: each policy, in memory and spilled
for keep in first last deepest; do
    q dedup "search.kbz" "deep.kbz" "search.kbz" -o "dd-$keep.kbz" --keep "$keep"
    sig "dedup --keep $keep" "dd-$keep.kbz"
    q dedup "search.kbz" "deep.kbz" "search.kbz" -o "ds-$keep.kbz" --keep "$keep" \
        --dedup-memory 1
    sig "dedup --keep $keep (spilled)" "ds-$keep.kbz"
done

# export: every format, with and without shaping
for f in pgn plain epd jsonl bullet binpack; do
    q export "search.kbz" --format "$f" -o "out.$f"
    sig "export $f" "out.$f"
    q export "search.kbz" --format "$f" -o "shaped.$f" --max-score 800 \
        --wdl-consistency 0.2 --piece-count-weights nnue-pytorch --seed 7
    sig "export $f, shaped" "shaped.$f"
done
q export "pv.kbz" --format pgn -o "analysis.pgn"
sig "export pgn of an analysis" "analysis.pgn"

# report and stats
q report "pv.kbz" -o "report.html" --json "report.jsonl"
sig "report json" "report.jsonl"
sig "report html" "report.html"
"$K" stats "search.kbz" "pv.kbz" --json > "stats.json" 2>/dev/null
sig "stats json" "stats.json"

# the search's signature
"$K" bench 2>&1 | grep -i "nodes" | head -1 | sed 's/^/bench: /'
