#!/usr/bin/env python3
"""Round trip of `kibitz annotate` checked by python-chess.

    python3 scripts/roundtrip.py GAMES.pgn[.zst] FILE.kbz

1. `kibitz export --format plain`: walking the original games with
   python-chess, every exported entry must be a position of the games, in
   order (same FEN, same ply), with a legal move, and the game's result
   from the side to move's point of view.
2. `kibitz export --format pgn`: python-chess reads every game back with
   the same moves as the original, and its `eval()` API returns one eval
   per label, equal to the label (JSON lines export) in White's view.
"""
import io
import json
import os
import subprocess
import sys

import chess
import chess.pgn

HERE = os.path.dirname(os.path.abspath(__file__))
KIBITZ = os.environ.get("KIBITZ", os.path.join(HERE, "..", "target", "release", "kibitz"))


def text(path):
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout.decode()
    return open(path, encoding="utf-8", errors="replace").read()


def export(kbz, fmt):
    return subprocess.run([KIBITZ, "export", kbz, "--format", fmt], check=True, capture_output=True).stdout.decode()


def games(pgn_text):
    handle = io.StringIO(pgn_text)
    while True:
        g = chess.pgn.read_game(handle)
        if g is None:
            return
        yield g


def check_plain(original, kbz):
    entries = []
    for block in export(kbz, "plain").split("e\n"):
        fields = dict(line.split(" ", 1) for line in block.strip().splitlines())
        if fields:
            entries.append(fields)
    i = 0
    checked = 0
    for g in games(original):
        result = {"1-0": 1, "0-1": -1, "1/2-1/2": 0}.get(g.headers.get("Result"), 0)
        board = g.board()
        moves = list(g.mainline_moves())
        for ply in range(len(moves) + 1):
            if i < len(entries) and entries[i]["fen"] == board.fen() and int(entries[i]["ply"]) == board.ply():
                e = entries[i]
                move = chess.Move.from_uci(e["move"])
                assert move in board.legal_moves, (e, board.fen())
                stm_result = result if board.turn == chess.WHITE else -result
                assert int(e["result"]) == stm_result, (e, stm_result)
                int(e["score"])
                i += 1
                checked += 1
            if ply < len(moves):
                board.push(moves[ply])
    assert i == len(entries), f"{len(entries) - i} exported positions not found in the games, in order"
    return checked


def check_pgn(original, kbz):
    labels = [json.loads(line) for line in export(kbz, "jsonl").splitlines()]
    exported = list(games(export(kbz, "pgn")))
    source = list(games(original))
    assert len(exported) == len(source), (len(exported), len(source))
    evals = []
    for a, b in zip(source, exported):
        assert list(a.mainline_moves()) == list(b.mainline_moves()), a.headers
        if b.eval() is not None:  # a comment before the first move
            evals.append(b.eval())
        for node in b.mainline():
            if node.eval() is not None:
                evals.append(node.eval())
    assert len(evals) == len(labels), (len(evals), len(labels))
    for pov, label in zip(evals, labels):
        white_to_move = " w " in label["fen"]
        white = pov.white()
        if label["mate"] is not None:
            m = label["mate"] if white_to_move else -label["mate"]
            assert white.mate() == m, (white, label)
        else:
            cp = label["score"] if white_to_move else -label["score"]
            assert white.score() == cp, (white, label)
    return len(exported), len(evals)


def main():
    original = text(sys.argv[1])
    kbz = sys.argv[2]
    n = check_plain(original, kbz)
    print(f"plain: {n} positions agree with python-chess's replay (FEN, ply, legal move, result)")
    g, e = check_pgn(original, kbz)
    print(f"pgn: {g} games read back by python-chess with the same moves; {e} evals equal to the labels")


if __name__ == "__main__":
    main()
