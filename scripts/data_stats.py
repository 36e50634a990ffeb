#!/usr/bin/env python3
"""The statistics `kibitz stats --json` gives, computed with python-chess
from a Stockfish plain file, with no kibitz code: an independent check.

Scores are the side to move's, in bins of 50 centipawns from -1000 (|score|
>= 31000 is a mate: mating when positive); pieces count kings; plies in
bins of 10 up to 300; the phase is Lichess's Divider's test of one
position (scalachess Divider.scala: endgame with at most 6 major and minor
pieces; middlegame with at most 10, or fewer than 4 pieces of a side on its
back rank, or a mixedness over 150; opening otherwise); results are the
side to move's; a new game starts wherever the ply does not grow.

    python3 scripts/data_stats.py FILE.plain
"""

import json
import sys

import chess

MATE_BOUND = 31000


def region_score(y, white, black):
    table = {
        (0, 0): 0,
        (1, 0): 1 + (8 - y),
        (2, 0): 2 + (y - 2) if y > 2 else 0,
        (3, 0): 3 + (y - 1) if y > 1 else 0,
        (4, 0): 3 + (y - 1) if y > 1 else 0,
        (0, 1): 1 + y,
        (1, 1): 5 + abs(3 - y),
        (2, 1): 4 + y,
        (3, 1): 5 + y,
        (0, 2): 2 + (6 - y) if y < 6 else 0,
        (1, 2): 4 + (6 - y),
        (2, 2): 7,
        (0, 3): 3 + (7 - y) if y < 7 else 0,
        (1, 3): 5 + (6 - y),
        (0, 4): 3 + (7 - y) if y < 7 else 0,
    }
    return table.get((white, black), 0)


def mixedness(board):
    white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
    total = 0
    for y in range(7):
        for x in range(7):
            region = 0x0303 << (x + 8 * y)
            total += region_score(y + 1, bin(white & region).count("1"), bin(black & region).count("1"))
    return total


def phase(board):
    kings_pawns = board.kings | board.pawns
    majors_minors = bin(board.occupied & ~kings_pawns).count("1")
    if majors_minors <= 6:
        return 2
    sparse = (bin(chess.BB_RANK_1 & board.occupied_co[chess.WHITE]).count("1") < 4
              or bin(chess.BB_RANK_8 & board.occupied_co[chess.BLACK]).count("1") < 4)
    if majors_minors <= 10 or sparse or mixedness(board) > 150:
        return 1
    return 0


def main():
    s = {
        "positions": 0, "games": 0, "score": [0] * 40, "score_beyond": [0, 0], "mates": [0, 0],
        "pieces": [0] * 33, "ply": [0] * 30, "ply_beyond": 0, "phase": [0, 0, 0],
        "result": [0, 0, 0, 0], "result_by_sign": [[0] * 3 for _ in range(3)],
        "side_to_move": [0, 0], "king_squares": [[0] * 64, [0] * 64],
    }
    last_ply = None
    rec = {}
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.rstrip("\n")
            if line != "e":
                key, _, value = line.partition(" ")
                rec[key] = value
                continue
            board = chess.Board(rec["fen"], chess960="KQkq" not in rec["fen"].split()[2]
                                and rec["fen"].split()[2] != "-")
            score, ply, result = int(rec["score"]), int(rec["ply"]), int(rec["result"])
            rec = {}
            if last_ply is None or ply <= last_ply:
                s["games"] += 1
            last_ply = ply
            s["positions"] += 1
            if abs(score) >= MATE_BOUND:
                s["mates"][1 if score > 0 else 0] += 1
            elif score < -1000:
                s["score_beyond"][0] += 1
            elif score >= 1000:
                s["score_beyond"][1] += 1
            else:
                s["score"][(score + 1000) // 50] += 1
            sign = (score > 0) - (score < 0)
            s["pieces"][len(board.piece_map())] += 1
            if ply >= 300:
                s["ply_beyond"] += 1
            else:
                s["ply"][ply // 10] += 1
            s["phase"][phase(board)] += 1
            r = {-1: 0, 0: 1, 1: 2}[result]
            s["result"][r] += 1
            s["result_by_sign"][sign + 1][r] += 1
            s["side_to_move"][0 if board.turn == chess.WHITE else 1] += 1
            s["king_squares"][0][board.king(chess.WHITE)] += 1
            s["king_squares"][1][board.king(chess.BLACK)] += 1
    print(json.dumps(s, sort_keys=True))


if __name__ == "__main__":
    main()
