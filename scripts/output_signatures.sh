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

sig() { printf '%s %s\n' "$(sha256sum < "$2" | cut -c1-16)" "$1"; }
q() { "$K" "$@" >/dev/null 2>&1; }

# annotate: the search, the net, [%eval], an engine; sharded and merged
q annotate "$GAMES" -o "$W/search.kbz" -d 3 -j 2
sig "annotate search -d 3" "$W/search.kbz"
q annotate "$GAMES" -o "$W/pv.kbz" -d 2 -j 2 --preset analysis --max-games 300
sig "annotate --preset analysis -d 2" "$W/pv.kbz"
q annotate "$GAMES" -o "$W/deep.kbz" -d 4 -j 2 --max-games 600 --dedup deepest
sig "annotate -d 4 --dedup deepest" "$W/deep.kbz"
q annotate "$GAMES" -o "$W/last.kbz" -d 2 -j 2 --max-games 600 --dedup last --dedup-memory 1
sig "annotate -d 2 --dedup last (spilled)" "$W/last.kbz"
q annotate "$EVALS" -o "$W/evals.kbz" --label pgn-eval --preset analysis
sig "annotate --label pgn-eval" "$W/evals.kbz"
for k in 0 1 2; do
    q annotate "$GAMES" -o "$W/shard$k.kbz" -d 3 -j 2 --shard "$k/3"
done
q merge "$W/shard0.kbz" "$W/shard1.kbz" "$W/shard2.kbz" -o "$W/merged.kbz"
sig "merge of 3 shards" "$W/merged.kbz"
cmp -s "$W/merged.kbz" "$W/search.kbz" && echo "merge of 3 shards equals the unsharded run" \
    || echo "merge of 3 shards DIFFERS from the unsharded run"
if [ -f "$NET" ]; then
    q annotate "$GAMES" -o "$W/net.kbz" -d 3 -j 2 --net "$NET" --max-games 400
    sig "annotate --net -d 3" "$W/net.kbz"
else
    echo "NOT RUN: annotate --net (no $NET)"
fi
if [ -x /usr/games/stockfish ]; then
    q annotate "$GAMES" -o "$W/engine.kbz" -d 5 -j 2 --engine /usr/games/stockfish \
        --engine-option Threads=1 --max-games 40
    sig "annotate --engine stockfish -d 5" "$W/engine.kbz"
else
    echo "NOT RUN: annotate --engine (no /usr/games/stockfish)"
fi

# relabel: a .kbz labelled again, and an exported plain file read back
q annotate "$W/search.kbz" -o "$W/relabel.kbz" -d 2 -j 2
sig "relabel .kbz -d 2" "$W/relabel.kbz"
q export "$W/search.kbz" --format plain -o "$W/search.plain"
q annotate "$W/search.plain" -o "$W/relabel-plain.kbz" -d 2 -j 2
sig "relabel .plain -d 2" "$W/relabel-plain.kbz"
q export "$W/search.kbz" --format binpack -o "$W/search.binpack"
q annotate "$W/search.binpack" -o "$W/relabel-binpack.kbz" -d 2 -j 2
sig "relabel .binpack -d 2" "$W/relabel-binpack.kbz"

# dedup: each policy, in memory and spilled
for keep in first last deepest; do
    q dedup "$W/search.kbz" "$W/deep.kbz" "$W/search.kbz" -o "$W/dd-$keep.kbz" --keep "$keep"
    sig "dedup --keep $keep" "$W/dd-$keep.kbz"
    q dedup "$W/search.kbz" "$W/deep.kbz" "$W/search.kbz" -o "$W/ds-$keep.kbz" --keep "$keep" \
        --dedup-memory 1
    sig "dedup --keep $keep (spilled)" "$W/ds-$keep.kbz"
done

# export: every format, with and without shaping
for f in pgn plain epd jsonl bullet binpack; do
    q export "$W/search.kbz" --format "$f" -o "$W/out.$f"
    sig "export $f" "$W/out.$f"
    q export "$W/search.kbz" --format "$f" -o "$W/shaped.$f" --max-score 800 \
        --wdl-consistency 0.2 --piece-count-weights nnue-pytorch --seed 7
    sig "export $f, shaped" "$W/shaped.$f"
done
q export "$W/pv.kbz" --format pgn -o "$W/analysis.pgn"
sig "export pgn of an analysis" "$W/analysis.pgn"

# report and stats
q report "$W/pv.kbz" -o "$W/report.html" --json "$W/report.jsonl"
sig "report json" "$W/report.jsonl"
sig "report html" "$W/report.html"
"$K" stats "$W/search.kbz" "$W/pv.kbz" --json > "$W/stats.json" 2>/dev/null
sig "stats json" "$W/stats.json"

# the search's signature
"$K" bench 2>&1 | grep -i "nodes" | head -1 | sed 's/^/bench: /'
