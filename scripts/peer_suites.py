#!/usr/bin/env python3
"""The right readings of the peer-suite files where python-chess errs.

`../shared/data/pgn/peer-suites/expected.tsv` gives python-chess's reading
of each file. On a few of them python-chess is not right, by the file's own
project's test or by the PGN standard (MANIFEST.md there says which). For
each of those this script writes the text as the right reading has it and
lets python-chess read that: the games, plies, games with errors and the
SHA-1 of every game's final position (FEN and a line feed each), as
expected.tsv gives them. Games of a variant kibitz does not play count as
games with no position. tests/replay.rs holds these figures; the
python-chess tier of the tests checks them against this script.

    python3 scripts/peer_suites.py ../shared/data/pgn/peer-suites
"""
import hashlib
import io
import sys

import chess
import chess.pgn
import logging

logging.disable(logging.CRITICAL)


def read(text):
    """python-chess's reading of `text`: (games, plies, errors, FENs)."""
    handle = io.StringIO(text)
    games = plies = errors = 0
    fens = []
    while True:
        game = chess.pgn.read_game(handle)
        if game is None:
            break
        games += 1
        plies += sum(1 for _ in game.mainline_moves())
        errors += bool(game.errors)
        fens.append(game.end().board().fen())
    return games, plies, errors, fens


def first_game(text):
    """python-chess's first game alone: the result after a blank line that
    python-chess reads as a second, empty game belongs to the first."""
    games, plies, errors, fens = read(text)
    game = chess.pgn.read_game(io.StringIO(text))
    moves = sum(1 for _ in game.mainline_moves())
    return 1, moves, int(bool(game.errors)), fens[:1]


def moves_then_error(sans):
    """A game of these moves, then a token that is no move."""
    board = chess.Board()
    for san in sans:
        board.push_san(san)
    return 1, len(sans), 1, [board.fen()]


def lines_as_games(text):
    """Each line a game of its own (games ended by their result, no blank
    line between them)."""
    out = [0, 0, 0, []]
    for line in text.splitlines():
        if line.strip():
            g, p, e, f = read(line + "\n")
            out[0] += g
            out[1] += p
            out[2] += e
            out[3] += f
    return tuple(out)


def skipped(games):
    """Games of a variant kibitz skips: no position is replayed."""
    return games, 0, 0, []


# file -> how its right reading is made, and why python-chess errs.
JUDGED = {
    # chesslib's test replays one game of 164 plies with its result after a
    # blank line.
    "chesslib__src_test_resources_ep.pgn": first_game,
    # chesslib's test expects one game with the illegal move.
    "chesslib__src_test_resources_err.pgn": first_game,
    # One game ending in a null move, its result after a blank line.
    "chesslib__src_test_resources_z0.pgn": first_game,
    # chessops expects 3 Antichess games (python-chess drops the first
    # line, tags and moves together).
    "chessops__data_headers-and-moves-on-the-same-line.pgn": lambda t: skipped(3),
    # chessops expects 4 games, each e4 e5 Nf3 Nc6 Bb5.
    "chessops__data_leading-whitespace.pgn": lambda t: read(
        "\n\n".join(["1. e4 e5 2. Nf3 Nc6 3. Bb5 *"] * 4) + "\n"
    ),
    # Brace comments do not nest: the comment ends at the first `}`, and
    # `which` is no move.
    "pgn-extract__test_infield_nested-comment.pgn": lambda t: moves_then_error(["e4"]),
    # pgn-extract reads 4 games, one per line, each ended by `*`.
    "pgn-extract__test_infield_test-fuzzydepth.pgn": lines_as_games,
    # pgn-extract reads 9 games of one ply: tags and moves on one line.
    "pgn-extract__test_infield_test-nobadresults.pgn": lambda t: lines_as_games(
        "\n".join(line.split("] ", 1)[1] for line in t.splitlines() if line.strip())
    ),
    # pgn-extract reads 2 games: the blank line after the game comment,
    # before move 1, does not end the game.
    "pgn-extract__test_infield_test-nochecks.pgn": lambda t: read(
        t.replace("extreme time pressure. }\n\n1. b3", "extreme time pressure. }\n1. b3")
    ),
    # German `Sf3` is not SAN: rejected after 1.d4 Nf6.
    "pgn-parser__doc_sampleGameThrow.pgn": lambda t: moves_then_error(["d4", "Nf6"]),
    # Variants kibitz does not play: skipped.
    "python-chess__data_pgn_antichess-programfox.pgn": lambda t: skipped(2),
    "python-chess__data_pgn_saturs-jannlee-zh-lichess.pgn": lambda t: skipped(1),
    # An unknown variant name is played as standard chess, as scalachess
    # plays it; python-chess reports it as an error.
    "scalachess__Fixtures.scala_invalidVariant.pgn": lambda t: read(
        t.replace('[Variant "starwars"]\n', "")
    ),
    # A byte-order mark after the first newline starts no game
    # (scalachess replays one game of 19 plies).
    "scalachess__Fixtures.scala_invisibleChar.pgn": lambda t: read(t.replace("\ufeff", "")),
}


def main():
    folder = sys.argv[1]
    print(f"# python-chess {chess.__version__}: file, games, plies, errors, fen_sha1")
    for name, reading in JUDGED.items():
        with open(f"{folder}/{name}", encoding="utf-8-sig", errors="replace") as f:
            text = f.read()
        games, plies, errors, fens = reading(text)
        sha = hashlib.sha1("".join(fen + "\n" for fen in fens).encode()).hexdigest()
        print(f"{name}\t{games}\t{plies}\t{errors}\t{sha}")


if __name__ == "__main__":
    main()
