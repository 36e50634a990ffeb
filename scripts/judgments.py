#!/usr/bin/env python3
"""Compares the judgments of two analysed PGN files move by move, as
python-chess reads them: Lichess's own export and kibitz's `export --format
pgn` of the same games labelled with `--label pgn-eval --preset analysis`.

For every main-line move of every game it compares the judgment NAG
($6 inaccuracy, $2 mistake, $4 blunder; none), the judgment comment (the
text `(0.26 → 1.67) Mistake. O-O was best.`), the `[%eval]` (python-chess's
`eval()`) and the first move of the variation. It also checks that
python-chess reads every game of the second file without errors.

Prints one line per game (`game N: M moves, J judged, D differences`), one
line per difference, then a summary line:
`judgments: G games, M moves, J judged by the first, K by the second, D differences`.
Exits 1 when a game fails to read or the files disagree.

    python3 scripts/judgments.py LICHESS.pgn KIBITZ.pgn

With `--counts FILE` it reads one file and prints, per game, tab
separated: plies, moves with an eval, then White's inaccuracies, mistakes
and blunders and Black's, as the NAGs give them.
"""

import re
import sys

import chess.pgn

JUDGMENT_NAGS = {6: "Inaccuracy", 2: "Mistake", 4: "Blunder"}
COMMENT = re.compile(r"\(([^)]*)\) ([^.]*)\.(?: (\S+) was best\.)?")


def moves_of(path):
    """Each game's main line: (san, judgment nag, comment, eval, variation head,
    mover: 0 White, 1 Black)."""
    games = []
    with open(path, encoding="utf-8") as f:
        while True:
            game = chess.pgn.read_game(f)
            if game is None:
                break
            if game.errors:
                raise SystemExit(f"{path}: game {len(games) + 1}: {game.errors}")
            rows = []
            node = game
            while node.variations:
                child = node.variations[0]
                nags = sorted(n for n in child.nags if n in JUDGMENT_NAGS)
                match = COMMENT.search(child.comment)
                comment = match.group(0) if match else None
                ev = child.eval()
                ev = None if ev is None else str(ev.white())
                alt = node.variations[1].move.uci() if len(node.variations) > 1 else None
                mover = 0 if node.turn() == chess.WHITE else 1
                rows.append((child.san(), nags[0] if nags else None, comment, ev, alt, mover))
                node = child
            games.append(rows)
    return games


def counts(path):
    for rows in moves_of(path):
        judged = {(c, n): 0 for c in (0, 1) for n in (6, 2, 4)}
        for row in rows:
            if row[1] is not None:
                judged[(row[5], row[1])] += 1
        cells = [len(rows), sum(r[3] is not None for r in rows)]
        cells += [judged[(c, n)] for c in (0, 1) for n in (6, 2, 4)]
        print("\t".join(map(str, cells)))
    return 0


def main():
    if sys.argv[1] == "--counts":
        return counts(sys.argv[2])
    first, second = moves_of(sys.argv[1]), moves_of(sys.argv[2])
    if len(first) != len(second):
        print(f"{len(first)} games against {len(second)}")
        return 1
    differences = moves = judged_first = judged_second = 0
    for g, (a, b) in enumerate(zip(first, second), 1):
        if len(a) != len(b):
            print(f"game {g}: {len(a)} moves against {len(b)}")
            differences += 1
            continue
        diffs = 0
        for ply, (x, y) in enumerate(zip(a, b), 1):
            moves += 1
            judged_first += x[1] is not None
            judged_second += y[1] is not None
            if x != y:
                diffs += 1
                print(f"  game {g} ply {ply} {x[0]}: {x[1:]} against {y[1:]}")
        print(f"game {g}: {len(a)} moves, {sum(r[1] is not None for r in a)} judged, "
              f"{diffs} differences")
        differences += diffs
    print(f"judgments: {len(first)} games, {moves} moves, {judged_first} judged by the first, "
          f"{judged_second} by the second, {differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
