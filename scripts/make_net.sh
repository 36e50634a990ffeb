#!/bin/sh
# kibitz's own net (data/kibitz-net.nnue) from nothing (docs/TRAINING.md):
# self-play games whose moves and labels come from kibitz's search with
# Stockfish 15.1's net
# (400 nodes a position in games played to ply 160, 600 in games cut at
# ply 80 for more openings and middlegames), then `kibitz train`.
#
#     scripts/make_net.sh [DIR]        # default target/make-net
#
# Every step can be stopped and the script run again: the data is made in
# chunks (16 of 1,000,000 positions, 8 of 500,000), two streams of chunks,
# one per core, each chunk its own seed; a chunk that was interrupted continues (--resume),
# one that is complete is left as it is; the training continues from its
# last checkpoint (--resume). Each step's wall time goes to DIR/times.log.
# The net is DIR/kibitz-net.nnue; `--net DIR/kibitz-net.nnue` evaluates with it.
set -eu
cd "$(dirname "$0")/.."
K=${KIBITZ:-target/release/kibitz}
DATA=${KIBITZ_DATA:-../shared/data}
DIR=${1:-target/make-net}
TEACHER=target/nn-ad9b42354671.nnue
[ -x "$K" ] || cargo build --release
mkdir -p "$DIR" target
[ -f "$TEACHER" ] || printf 'uci\nexport_net %s\nquit\n' "$TEACHER" | /usr/games/stockfish >/dev/null

# chunk SEED POSITIONS NODES MAX_PLIES: one chunk of data, skipped when its
# log says it is complete.
chunk() {
    if [ -f "$DIR/sp-$1.log" ] && grep -q '^seconds' "$DIR/sp-$1.log"; then
        return
    fi
    start=$(date +%s)
    "$K" selfplay -o "$DIR/sp-$1.kbz" --positions "$2" --nodes "$3" --max-plies "$4" -j 1 \
        --book "$DATA/epd/noob_3moves.epd.zst" --seed "$1" --net "$TEACHER" -q --resume \
        > "$DIR/sp-$1.log"
    echo "chunk $1 ($2 positions, $3 nodes, to ply $4): $(( $(date +%s) - start )) s" >> "$DIR/times.log"
}

# stream FIRST: the chunks FIRST, FIRST + 2, ... of each kind.
stream() {
    s=$1
    while [ "$s" -le 16 ]; do
        chunk "$s" 1000000 400 160
        s=$((s + 2))
    done
    s=$(($1 + 16))
    while [ "$s" -le 24 ]; do
        chunk "$s" 500000 600 80
        s=$((s + 2))
    done
}
stream 1 &
stream 2 &
wait

if ! grep -q '^train:' "$DIR/times.log" 2>/dev/null || [ ! -f "$DIR/kibitz-net.nnue" ]; then
    start=$(date +%s)
    "$K" train "$DIR"/sp-*.kbz -o "$DIR/kibitz-net.nnue" --resume --hidden 128 --output-buckets 8 \
        --wdl 0 --lr 0.003 --superbatches 80 --batches 100 -j 2 -q
    echo "train: $(( $(date +%s) - start )) s" >> "$DIR/times.log"
fi
