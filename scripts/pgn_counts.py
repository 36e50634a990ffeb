#!/usr/bin/env python3
"""Counts games, plies and games with errors in PGN files with python-chess.

These are the expected counts the corpus tests of `kibitz replay` compare
with (tests/replay.rs). A game "with errors" is one python-chess reports an
error for (game.errors non-empty: an illegal or unparsable move, a bad FEN);
its plies are the moves played before the error.

    python3 scripts/pgn_counts.py ../shared/data/pgn/**/*.pgn*
"""
import io
import subprocess
import sys

import chess
import chess.pgn


def open_text(path):
    if path.endswith(".zst"):
        data = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    else:
        with open(path, "rb") as f:
            data = f.read()
    return io.StringIO(data.decode("utf-8", errors="replace"))


def count(path):
    games = plies = errors = 0
    error_plies = 0
    handle = open_text(path)
    while True:
        game = chess.pgn.read_game(handle)
        if game is None:
            break
        games += 1
        n = sum(1 for _ in game.mainline_moves())
        plies += n
        if game.errors:
            errors += 1
            error_plies += n
    return games, plies, errors, error_plies


def main():
    print(f"# python-chess {chess.__version__}: file, games, plies, games with errors, plies in those games")
    for path in sys.argv[1:]:
        games, plies, errors, error_plies = count(path)
        print(f"{path}\t{games}\t{plies}\t{errors}\t{error_plies}")


if __name__ == "__main__":
    main()
