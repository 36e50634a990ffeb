#!/usr/bin/env python3
"""Applies `kibitz export`'s shaping rules to an unshaped Stockfish plain
file, written apart from kibitz's code: an independent computation of what
`--max-score`, `--wdl-consistency` and `--piece-count-weights` keep.

The rules, as `kibitz export --help` and src/record/shape.rs state them:
0. the selection: a position before ply N (`--skip-plies`; the plain
   file's ply, the game's, which is the chain's for games from the start
   position), in check (`--skip-check`), or whose move captures or
   promotes (`--skip-captures`) is dropped (python-chess judges check and
   capture);
1. a score beyond +-N centipawns or a mate (|score| >= 31000) is dropped;
2. a position whose result (for the side to move; plain writes an unknown
   result as 0, a draw) has a probability below P under nnue-pytorch's
   win-rate model (Stockfish's fishtest fit of score and ply, its width
   scaled by 1.5) is dropped;
3. of the rest, a position with k pieces is kept when
   draw(seed, fen) < p_k, p_k = w_k * n_out / (W * n_k) capped at 1, where
   n_k counts the survivors of 1 and 2 with k pieces, W sums the weights
   of the piece counts present, n_out = min over them of n_k * W / w_k,
   and draw is SplitMix64 of the seed's SplitMix64 xor FNV-1a of the FEN.

    python3 scripts/shaping.py PLAIN [--skip-plies N] [--skip-check]
        [--skip-captures] [--max-score N] [--wdl-consistency P]
        [--piece-count-weights nnue-pytorch|uniform|w0,...,w32] [--seed S]
        [--write KEPT.plain]

Prints a JSON object with the counts per rule; --write writes the kept
records, in order, as plain.
"""

import argparse
import json
import math

MASK = (1 << 64) - 1


def mix(z):
    z = (z + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def draw(seed, fen):
    h = 0xCBF29CE484222325
    for b in fen.encode():
        h = ((h ^ b) * 0x100000001B3) & MASK
    return (mix(mix(seed) ^ h) >> 11) / float(1 << 53)


def wdl(score, ply):
    m = min(240, ply) / 64.0
    a = ((-3.68389304 * m + 30.07065921) * m - 60.52878723) * m + 149.53378557
    b = 1.5 * (((-2.0181857 * m + 15.85685038) * m - 29.83452023) * m + 47.59078827)
    x = max(-2000.0, min(2000.0, 100.0 * score / 208.0))
    w = 1.0 / (1.0 + math.exp((a - x) / b))
    l = 1.0 / (1.0 + math.exp((a + x) / b))
    return w, 1.0 - w - l, l


def records(path):
    with open(path) as f:
        rec = {}
        for line in f:
            line = line.rstrip("\n")
            if line == "e":
                yield rec
                rec = {}
            else:
                key, _, value = line.partition(" ")
                rec[key] = value


def pieces(fen):
    return sum(c.isalpha() for c in fen.split()[0])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("plain")
    p.add_argument("--skip-plies", type=int, default=0)
    p.add_argument("--skip-check", action="store_true")
    p.add_argument("--skip-captures", action="store_true")
    p.add_argument("--max-score", type=int)
    p.add_argument("--wdl-consistency", type=float)
    p.add_argument("--piece-count-weights")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--write")
    a = p.parse_args()
    stats = {"labels": 0, "selection": 0, "max_score": 0, "wdl_consistency": 0,
             "piece_count": 0, "kept": 0}
    survivors = []
    for r in records(a.plain):
        stats["labels"] += 1
        score, ply, result = int(r["score"]), int(r["ply"]), int(r["result"])
        if a.skip_plies or a.skip_check or a.skip_captures:
            import chess
            board = chess.Board(r["fen"], chess960=True)
            move = chess.Move.from_uci(r["move"])
            capture = board.is_capture(move) or move.promotion is not None
            if (ply < a.skip_plies or (a.skip_check and board.is_check())
                    or (a.skip_captures and capture)):
                stats["selection"] += 1
                continue
        if a.max_score is not None and (abs(score) >= 31000 or abs(score) > a.max_score):
            stats["max_score"] += 1
            continue
        if a.wdl_consistency is not None:
            w, d, l = wdl(score, ply)
            prob = w if result > 0 else l if result < 0 else d
            if prob < a.wdl_consistency:
                stats["wdl_consistency"] += 1
                continue
        survivors.append(r)
    kept = survivors
    if a.piece_count_weights:
        spec = a.piece_count_weights
        if spec == "nnue-pytorch":
            weights = [2.0 - ((k - 16) / 16.0) ** 2 for k in range(33)]
        elif spec == "uniform":
            weights = [1.0] * 33
        else:
            weights = [float(x) for x in spec.split(",")]
        counts = [0] * 33
        for r in survivors:
            counts[min(32, pieces(r["fen"]))] += 1
        present = [k for k in range(33) if counts[k] > 0 and weights[k] > 0]
        total = sum(weights[k] for k in present)
        out = min(counts[k] * total / weights[k] for k in present) if present else 0
        keep = [min(1.0, weights[k] * out / (total * counts[k])) if k in present else 0.0
                for k in range(33)]
        kept = []
        for r in survivors:
            if draw(a.seed, r["fen"]) < keep[min(32, pieces(r["fen"]))]:
                kept.append(r)
            else:
                stats["piece_count"] += 1
    stats["kept"] = len(kept)
    if a.write:
        with open(a.write, "w") as f:
            for r in kept:
                f.write(f"fen {r['fen']}\nmove {r['move']}\nscore {r['score']}\n"
                        f"ply {r['ply']}\nresult {r['result']}\ne\n")
    print(json.dumps(stats, sort_keys=True))


if __name__ == "__main__":
    main()
