#!/usr/bin/env bash
# kibitz on a bare server, as a user runs it there: the binary alone, no
# fonts (an empty /usr/share/fonts), no python and no zstd on the PATH, the
# inputs in a read-only folder. Each command a user runs must exit 0 with
# its output, or refuse with a clear error where the user asked for what
# cannot be had (an output in the read-only folder); none may crash.
#
#   scripts/bare_server.sh [KIBITZ_BINARY]     (root: it makes a mount namespace)
#
# Prints one line per command and "bare server: all N checks passed", or the
# failures and exits 1. Without root it prints NOT RUN and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/kibitz}")
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
    echo "NOT RUN: the bare-server test needs root and unshare (a mount namespace)"
    exit 0
fi
[ -x "$bin" ] || { echo "no kibitz binary at $bin (cargo build --release)" >&2; exit 1; }
work=$(mktemp -d /tmp/kibitz-bare.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/inputs" "$work/run"
cp "$bin" "$work/bin/kibitz"
cp data/sample.pgn "$work/inputs/"
printf 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\nnot a position\nrnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n' \
    > "$work/inputs/book.epd"

unshare --mount --propagation private bash -s "$work" <<'INNER'
set -uo pipefail
work=$1
# No fonts, and the inputs read-only, for this namespace only.
mount -t tmpfs -o size=1m none /usr/share/fonts
mount --bind "$work/inputs" "$work/inputs"
mount -o remount,ro,bind "$work/inputs"
cd "$work/run"
ln -s "$work/inputs" data
# kibitz runs with nothing of this machine's environment: a PATH that
# holds kibitz alone, a home, no KIBITZ_* settings.
kibitz() { env -i PATH="$work/bin" HOME="$work/run" kibitz "$@"; }
failed=0
checks=0
# ok NAME FILE... -- COMMAND: the command exits 0 and writes each FILE.
ok() {
    local name=$1; shift
    local files=()
    while [ "$1" != -- ]; do files+=("$1"); shift; done
    shift
    checks=$((checks + 1))
    "$@" >"$name.out" 2>"$name.err"
    local code=$?
    local missing=""
    for f in "${files[@]}"; do [ -s "$f" ] || missing="$missing $f"; done
    if [ "$code" = 0 ] && [ -z "$missing" ]; then
        echo "ok      $name"
    else
        echo "FAILED  $name: exit $code${missing:+, missing:$missing}"
        sed 's/^/        /' "$name.err" | head -5
        failed=$((failed + 1))
    fi
}
# refused NAME -- COMMAND: the command exits 1 or 2 with a message that
# names the cause (no panic: 101; no signal).
refused() {
    local name=$1; shift; shift
    checks=$((checks + 1))
    "$@" >"$name.out" 2>"$name.err"
    local code=$?
    if { [ "$code" = 1 ] || [ "$code" = 2 ]; } && grep -q "Read-only file system" "$name.err"; then
        echo "ok      $name (refused: $(head -c 120 "$name.err" | tr '\n' ' '))"
    else
        echo "FAILED  $name: exit $code, expected a clear refusal"
        sed 's/^/        /' "$name.err" | head -5
        failed=$((failed + 1))
    fi
}
for tool in python3 python zstd; do
    if env -i PATH="$work/bin" /bin/sh -c "command -v $tool" >/dev/null; then
        echo "FAILED  $tool is on kibitz's PATH"
        failed=$((failed + 1))
    fi
done
if [ -n "$(ls /usr/share/fonts)" ]; then echo "FAILED  fonts are there"; failed=$((failed + 1)); fi
ok readme-first-command sample.kbz -- kibitz annotate data/sample.pgn -o sample.kbz
ok inspect inspect.out -- kibitz inspect sample.kbz
ok selfplay sp.kbz -- kibitz selfplay -o sp.kbz --games 12 --nodes 1000 --book data/book.epd
ok train net.nnue net.nnue.loss.png net.nnue.loss.svg -- \
    kibitz train sp.kbz sample.kbz -o net.nnue --superbatches 2 --batches 4 --batch-size 1024
for format in pgn plain epd jsonl bullet binpack viriformat; do
    ok "export-$format" "export.$format" -- kibitz export sample.kbz --format "$format" -o "export.$format"
done
ok annotate-analysis analysis.kbz -- kibitz annotate data/sample.pgn -o analysis.kbz --preset analysis --depth 4
ok report report.html report.jsonl -- kibitz report analysis.kbz -o report.html --json report.jsonl
ok stats plots/score.png plots/score.svg plots/king-squares.png -- kibitz stats sp.kbz sample.kbz --plots plots
ok search-with-the-new-net search-with-the-new-net.out -- kibitz search "$(head -1 data/book.epd | cut -d' ' -f1-4)" --depth 4 --net net.nnue
refused annotate-into-the-read-only-folder -- kibitz annotate data/sample.pgn -o data/x.kbz --depth 2
refused stats-plots-into-the-read-only-folder -- kibitz stats sample.kbz --plots data/plots
if [ "$failed" = 0 ]; then
    echo "bare server: all $checks checks passed"
else
    echo "bare server: $failed of $checks checks FAILED"
    exit 1
fi
INNER
