#!/usr/bin/env python3
"""A direct python-chess run of a UCI engine on the positions kibitz
annotate searches, for tests/engine.rs to compare with kibitz's labels.

    python3 scripts/engine_reference.py ENGINE GAMES.pgn[.zst] --games N (--nodes K | --depth D) [--skip-plies 8]

For each of the first N games: a new game for the engine (`ucinewgame`),
then every position from ply SKIP on that is not in check and has a legal
move, in game order, analysed with `go nodes K` (Threads 1, Hash 16: the
engine's defaults, which kibitz also sets), with the game's moves so far.
(`--depth D` uses `go depth D` instead: the same protocol, used by
BENCHMARKS.md to time a python-chess labelling loop against kibitz.)
Prints one JSON line per position: game (0-based), ply, score or mate from
the side to move, best move (UCI). With `--multipv K` each position is
analysed with `analyse(multipv=K)` instead, and its line also has
`multipv`: the K moves with their scores, best first.
"""
import argparse
import io
import json
import subprocess
import sys

import chess
import chess.engine
import chess.pgn


def text(path):
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout.decode()
    return open(path, encoding="utf-8", errors="replace").read()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("engine")
    p.add_argument("pgn")
    p.add_argument("--games", type=int, required=True)
    limit = p.add_mutually_exclusive_group(required=True)
    limit.add_argument("--nodes", type=int)
    limit.add_argument("--depth", type=int)
    p.add_argument("--skip-plies", type=int, default=8)
    p.add_argument("--multipv", type=int, default=1)
    args = p.parse_args()
    engine = chess.engine.SimpleEngine.popen_uci(args.engine)
    engine.configure({"Threads": 1, "Hash": 16})
    handle = io.StringIO(text(args.pgn))
    for index in range(args.games):
        game = chess.pgn.read_game(handle)
        if game is None:
            break
        board = game.board()
        token = object()  # a new object: python-chess sends ucinewgame
        moves = list(game.mainline_moves())
        for ply in range(len(moves) + 1):
            if ply >= args.skip_plies and not board.is_check() and any(board.legal_moves):
                limit = chess.engine.Limit(nodes=args.nodes, depth=args.depth)
                if args.multipv > 1:
                    infos = engine.analyse(board, limit, game=token, multipv=args.multipv)
                    lines = []
                    for info in infos:
                        s = info["score"].relative
                        lines.append({
                            "move": info["pv"][0].uci(),
                            "score": s.score() if not s.is_mate() else None,
                            "mate": s.mate() if s.is_mate() else None,
                        })
                    print(json.dumps({"game": index, "ply": ply, "multipv": lines,
                                      "capture": board.is_capture(infos[0]["pv"][0])}), flush=True)
                    if ply < len(moves):
                        board.push(moves[ply])
                    continue
                # `play` returns the engine's `bestmove` and its last info.
                result = engine.play(board, limit, game=token, info=chess.engine.INFO_SCORE)
                score = result.info["score"].relative
                print(json.dumps({
                    "game": index,
                    "ply": ply,
                    "score": score.score() if not score.is_mate() else None,
                    "mate": score.mate() if score.is_mate() else None,
                    "best": result.move.uci(),
                    "capture": board.is_capture(result.move),
                }), flush=True)
            if ply < len(moves):
                board.push(moves[ply])
    engine.quit()


if __name__ == "__main__":
    sys.exit(main())
