#!/usr/bin/env python3
"""Counts games, plies and games with errors in PGN files with python-chess.

These are the expected counts the corpus tests of `kibitz replay` compare
with (tests/replay.rs). A game "with errors" is one python-chess reports an
error for (game.errors non-empty: an illegal or unparsable move, a bad FEN);
its plies are the moves played before the error.

    python3 scripts/pgn_counts.py ../shared/data/pgn/**/*.pgn*

With --games, one line per game of one file instead: its number (from 1),
its plies, 1 if python-chess reports an error for it (else 0), and the FEN
of its last position (tests/pgn.rs compares these with kibitz's reading):

    python3 scripts/pgn_counts.py --games FILE
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


def games(path):
    handle = open_text(path)
    while True:
        game = chess.pgn.read_game(handle)
        if game is None:
            break
        yield game


def count(path):
    n = plies = errors = 0
    error_plies = 0
    for game in games(path):
        n += 1
        moves = sum(1 for _ in game.mainline_moves())
        plies += moves
        if game.errors:
            errors += 1
            error_plies += moves
    return n, plies, errors, error_plies


def per_game(path):
    out = sys.stdout
    for number, game in enumerate(games(path), 1):
        moves = sum(1 for _ in game.mainline_moves())
        out.write(f"{number}\t{moves}\t{int(bool(game.errors))}\t{game.end().board().fen()}\n")


def main():
    if sys.argv[1:2] == ["--games"]:
        per_game(sys.argv[2])
        return
    print(f"# python-chess {chess.__version__}: file, games, plies, games with errors, plies in those games")
    for path in sys.argv[1:]:
        games_read, plies, errors, error_plies = count(path)
        print(f"{path}\t{games_read}\t{plies}\t{errors}\t{error_plies}")


if __name__ == "__main__":
    main()
