#!/bin/sh
# The built-in net from nothing (docs/TRAINING.md): self-play data labelled
# by kibitz's search with Stockfish 15.1's net, then `kibitz train`.
#
#     scripts/make_net.sh [DIR]        # default target/make-net
#
# Two streams of 300,000-position chunks, one per core, each chunk its own
# seed; a chunk that was interrupted continues (--resume), one that is
# complete is left as it is, so the script can be run again after a stop.
# The net is DIR/kibitz-net.nnue; copy it to data/ to build it in.
set -eu
cd "$(dirname "$0")/.."
K=${KIBITZ:-target/release/kibitz}
DATA=${KIBITZ_DATA:-../shared/data}
DIR=${1:-target/make-net}
TEACHER=target/nn-ad9b42354671.nnue
[ -x "$K" ] || cargo build --release
mkdir -p "$DIR" target
[ -f "$TEACHER" ] || printf 'uci\nexport_net %s\nquit\n' "$TEACHER" | /usr/games/stockfish >/dev/null

# chunk SEED NODES [MAX_PLIES]
chunk() {
    extra=""
    [ -n "${3:-}" ] && extra="--max-plies $3"
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$K" selfplay -o "$DIR/sp-$1.kbz" --positions 300000 --nodes "$2" $extra -j 1 \
        --book "$DATA/epd/noob_3moves.epd.zst" --seed "$1" --net "$TEACHER" -q --resume \
        > "$DIR/sp-$1.log"
    echo "chunk $1 ($2 nodes${3:+, games cut at ply $3}): $(( $(date +%s) - start )) s" >> "$DIR/times.log"
}

stream_a() {
    chunk 1 2500; chunk 2 2500; chunk 201 1200; chunk 202 1200
    for s in 401 402 403 404 405 406 407 408; do chunk $s 600 100; done
}
stream_b() {
    chunk 101 2500; chunk 301 1200; chunk 302 1200
    for s in 501 502 503 504 505 506 507 508; do chunk $s 600 100; done
}
stream_a &
stream_b &
wait

start=$(date +%s)
"$K" train "$DIR"/sp-*.kbz -o "$DIR/kibitz-net.nnue" --force --hidden 128 --wdl 0 \
    --lr 0.003 --superbatches 60 --batches 100 -j 2 -q
echo "train: $(( $(date +%s) - start )) s" >> "$DIR/times.log"
