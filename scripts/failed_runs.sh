#!/bin/sh
# Every command that writes a file, given bad input: its exit code, and
# whether it left a file behind (a new one, or an older one changed).
#
#   scripts/failed_runs.sh [KIBITZ]      # default target/release/kibitz
#
# Each case runs twice: once with no file at the output's name (is a new
# file left?), once with an older file there (is it left as it was?).
set -u
K=${1:-target/release/kibitz}
case "$K" in /*) ;; *) K="$PWD/$K" ;; esac
DATA="$(cd "$(dirname "$0")/../data" && pwd)"
W=$(mktemp -d /tmp/kibitz-failed-runs.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"

# Inputs: a file that is no .kbz; a .kbz damaged in a block past its
# header; a PGN with no game; a net that is no net.
printf 'not a kbz file\n' > bad.kbz
"$K" annotate "$DATA/sample.pgn" --depth 1 -q -o good.kbz >/dev/null 2>&1
python3 - <<'EOF'
data = bytearray(open("good.kbz", "rb").read())
at = len(data) * 2 // 3
for i in range(at, at + 64):
    data[i] ^= 0x5a
open("damaged.kbz", "wb").write(bytes(data))
EOF
printf '%s' '' > empty.pgn
printf 'not a net\n' > bad.nnue

printf '%-58s %6s %-10s %-14s\n' "command" "exit" "new file" "older file"
# run LABEL OUTPUT FORCE COMMAND...: FORCE is the flag that lets the command
# replace a file (`-` for a command that replaces without one). An OUTPUT
# ending in / is a folder of files.
run() {
    label=$1; raw=$2; out=${2%/}; force=$3; shift 3
    [ "$force" = - ] && force=
    rm -rf "$out" "$out".partial
    "$@" >/dev/null 2>&1
    code=$?
    if [ -d "$out" ]; then
        if [ -n "$(ls -A "$out")" ]; then left="left"; else left="none"; fi
    elif [ -e "$out" ]; then left="left"; else left="none"; fi
    rm -rf "$out"
    if [ "$out" != "$raw" ]; then
        mkdir "$out" && printf 'older file\n' > "$out/score.png"
        old="$out/score.png"
    else
        printf 'older file\n' > "$out"
        old="$out"
    fi
    "$@" $force >/dev/null 2>&1 || true
    if [ "$(cat "$old" 2>/dev/null)" = "older file" ]; then older="untouched"; else older="REPLACED"; fi
    rm -rf "$out" "$out".partial
    printf '%-58s %6s %-10s %-14s\n' "$label" "$code" "$left" "$older"
}
for fmt in plain binpack bullet jsonl pgn epd parquet; do
    run "export bad.kbz --format $fmt" "x.$fmt" - "$K" export bad.kbz --format "$fmt" -o "x.$fmt"
    run "export damaged.kbz --format $fmt" "x.$fmt" - "$K" export damaged.kbz --format "$fmt" -o "x.$fmt"
done
run "dedup damaged.kbz" x.kbz --force "$K" dedup damaged.kbz -o x.kbz
run "merge good.kbz damaged.kbz" x.kbz --force "$K" merge good.kbz damaged.kbz -o x.kbz
run "annotate empty.pgn" x.kbz --force "$K" annotate empty.pgn -o x.kbz
run "report damaged.kbz" x.html - "$K" report damaged.kbz -o x.html
run "stats damaged.kbz --plots DIR" plots/ - "$K" stats damaged.kbz --plots plots
run "selfplay --net bad.nnue" x.kbz --force "$K" selfplay --games 2 --depth 1 --net bad.nnue -o x.kbz
run "selfplay --book empty.pgn" x.kbz --force "$K" selfplay --games 2 --depth 1 --book empty.pgn -o x.kbz
run "selfplay --engine /bin/false" x.kbz --force "$K" selfplay --games 2 --depth 1 --engine /bin/false -o x.kbz
run "train damaged.kbz" x.nnue --force "$K" train damaged.kbz --superbatches 1 --batches 1 -o x.nnue
run "train bad.kbz" x.nnue --force "$K" train bad.kbz --superbatches 1 --batches 1 -o x.nnue
