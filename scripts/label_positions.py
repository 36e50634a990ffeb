#!/usr/bin/env python3
"""Training positions for `kibitz tune`, labelled by Stockfish.

Samples quiet positions (not in check, no capture that wins material by a
simple exchange) from the shared PGN games, and writes them as EPD with the
Stockfish 15.1 score of a fixed-depth search from the side to move's point
of view (`ce`, centipawns), using every core.

    python3 scripts/label_positions.py --positions 60000 --depth 8 -o target/tune.epd
"""
import argparse
import io
import multiprocessing as mp
import os
import random
import subprocess

import chess
import chess.engine
import chess.pgn

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("KIBITZ_DATA", os.path.join(HERE, "..", "..", "shared", "data"))
STOCKFISH = os.environ.get("STOCKFISH", "/usr/games/stockfish")
SOURCES = [
    "pgn/lichess/lichess-org_database_2016-05.pgn.zst",
    "pgn/lichess/lichess-org_database_2017-05.pgn.zst",
    "pgn/engine/TCEC_Season_13_-_Superfinal.pgn.zst",
    "pgn/edgecases/pgn-reader_legal.pgn",
]


def text(path):
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout.decode()
    return open(path, encoding="utf-8", errors="replace").read()


def candidates(seed):
    out = []
    for src in SOURCES:
        handle = io.StringIO(text(os.path.join(SHARED, src)))
        while True:
            g = chess.pgn.read_game(handle)
            if g is None:
                break
            b = g.board()
            for ply, m in enumerate(g.mainline_moves()):
                b.push(m)
                if ply < 8 or b.is_check() or b.is_game_over():
                    continue
                quiet = True
                for c in b.generate_legal_captures():
                    victim = b.piece_type_at(c.to_square) or chess.PAWN
                    attacker = b.piece_type_at(c.from_square)
                    values = {1: 1, 2: 3, 3: 3, 4: 5, 5: 9, 6: 100}
                    if values[victim] > values[attacker] or not b.is_attacked_by(not b.turn, c.to_square):
                        quiet = False
                        break
                if quiet:
                    out.append(b.fen())
    random.Random(seed).shuffle(out)
    return out


def label(args):
    fens, depth = args
    sf = chess.engine.SimpleEngine.popen_uci(STOCKFISH)
    sf.configure({"Threads": 1, "Hash": 16})
    lines = []
    for fen in fens:
        b = chess.Board(fen)
        info = sf.analyse(b, chess.engine.Limit(depth=depth))
        score = info["score"].relative
        if score.is_mate():
            continue
        lines.append(f"{b.epd()} ce {score.score()};")
    sf.quit()
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--positions", type=int, default=60000)
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-o", "--output", default="target/tune.epd")
    args = p.parse_args()
    fens = candidates(args.seed)[: args.positions]
    jobs = os.cpu_count() or 1
    parts = [(fens[i::jobs], args.depth) for i in range(jobs)]
    with mp.Pool(jobs) as pool:
        results = pool.map(label, parts)
    with open(args.output, "w") as f:
        for lines in results:
            for line in lines:
                f.write(line + "\n")
    print(f"{sum(len(r) for r in results)} positions written to {args.output}")


if __name__ == "__main__":
    main()
