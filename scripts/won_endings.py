#!/usr/bin/env python3
"""Does kibitz convert won Syzygy endings against a perfect defender?

For every shared table with 4 or 5 pieces (an .rtbw file; the 3-piece
tables are probed but not sampled), --per-ending random positions are drawn
that are won for the side to move with WDL exactly 2 (no cursed wins), legal,
with the side not to move not in check, halfmove clock 0, no castling rights
and no pawn on rank 1 or 8. Which colour holds which material and who is to
move are random too, so the winner is sometimes Black. kibitz plays the side
to move (the winner) over UCI, one `position fen START moves ...` and
`go depth N` per move; the defender is perfect: of its legal replies it plays
one that leaves the winner the worst WDL and, among those, the longest DTZ
(ties: the first in sorted UCI order). With --defender dtz50 the defender
instead maximises DTZ plus the halfmove clock after its reply (a zeroing
reply resets it), which is what resists the 50-move rule best.

A game ends
  converted   the winner mates;
  gave-away   a position the winner no longer wins with WDL 2 (a draw,
              stalemate, insufficient material, a cursed win or a loss);
  repetition  the third occurrence of a position;
  fifty       the halfmove clock reaches 100 without mate;
  error       the engine answered nothing legal or died.
A zeroing move that keeps the win resets the clock and play goes on into the
smaller ending, up to mate. The table's `twice` column counts the games in which some position occurred
a second time (the game went round, whatever its end); its `edge` column counts the converted
games whose mate came with the halfmove clock at 90 or more (won only because
the 50-move rule squeezed the winner onto the DTZ line at the end). Each game's JSON also carries `doomed_ply`, the
first ply after which the winner's DTZ plus the halfmove clock exceeded 100
(the win already lost to the 50-move rule, however play went on).

    python3 scripts/won_endings.py                                 # target/release/kibitz, depths 1,3,6
    nice -n 19 python3 scripts/won_endings.py --kibitz target/release/kibitz \\
        --depths 1,3,6 --jobs 2 --json /tmp/won.json | tee /tmp/won.txt
    python3 scripts/won_endings.py --endings KRBvKR,KBNvK --per-ending 5 --depths 6
    python3 scripts/won_endings.py --table-from /tmp/won.json      # reprint a run's table

Samples depend only on --seed and the ending, so two binaries are compared on
the same positions. Each game starts with `ucinewgame`; a game is a
deterministic function of the binary, its start and the depth.
"""
import argparse
import concurrent.futures
import json
import os
import queue
import random
import subprocess
import sys
import threading
import time

try:
    import chess
    import chess.syzygy
except ImportError:  # pragma: no cover
    sys.exit("python-chess is missing: pip install chess")

DEFAULT_TABLES = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "..", "..", "shared", "data", "syzygy")
if not os.path.isdir(DEFAULT_TABLES):
    DEFAULT_TABLES = "/work/shared/data/syzygy"

PIECE = {"K": chess.KING, "Q": chess.QUEEN, "R": chess.ROOK, "B": chess.BISHOP,
         "N": chess.KNIGHT, "P": chess.PAWN}
REASONS = ("converted", "gave-away", "repetition", "fifty", "error")


# ----------------------------------------------------------------------------
# Sampling


def endings_in(path):
    names = set()
    for f in os.listdir(path):
        stem, ext = os.path.splitext(f)
        if ext == ".rtbw" and "v" in stem:
            pieces = len(stem) - 1
            if pieces in (4, 5):
                names.add(stem)
    return sorted(names, key=lambda n: (len(n), n))


def random_position(rng, ending):
    """One random placement of the ending's material, or None."""
    strong, weak = ending.split("v")
    first_white = rng.random() < 0.5
    white, black = (strong, weak) if first_white else (weak, strong)
    board = chess.Board(None)
    used = set()
    for colour, group in ((chess.WHITE, white), (chess.BLACK, black)):
        for ch in group:
            kind = PIECE[ch]
            while True:
                sq = rng.randrange(8, 56) if kind == chess.PAWN else rng.randrange(64)
                if sq not in used:
                    break
            used.add(sq)
            board.set_piece_at(sq, chess.Piece(kind, colour))
    board.turn = rng.random() < 0.5
    board.castling_rights = chess.BB_EMPTY
    board.ep_square = None
    board.halfmove_clock = 0
    board.fullmove_number = 1
    return board


def sample_ending(args, ending):
    """--per-ending distinct starts won with WDL 2 for the side to move."""
    rng = random.Random(f"{args.seed}:{ending}")
    found, seen, tries = [], set(), 0
    with chess.syzygy.open_tablebase(args.syzygy) as tb:
        while len(found) < args.per_ending and tries < args.max_tries:
            tries += 1
            board = random_position(rng, ending)
            if not board.is_valid():  # also: the side not to move in check
                continue
            if board.is_game_over():
                continue
            try:
                if tb.probe_wdl(board) != 2:
                    continue
            except (KeyError, chess.syzygy.MissingTableError):
                continue
            fen = board.fen()
            if fen in seen:
                continue
            seen.add(fen)
            found.append(fen)
    return ending, found, tries


# ----------------------------------------------------------------------------
# The engine


class Engine:
    def __init__(self, path, syzygy, hash_mb, timeout):
        self.path, self.syzygy, self.hash_mb, self.timeout = path, syzygy, hash_mb, timeout
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen([self.path, "uci"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, args=(self.proc, self.lines), daemon=True).start()
        self.send("uci")
        options = []
        for line in self.wait_for("uciok"):
            if line.startswith("option name "):
                options.append(line.split()[2])
        if "SyzygyPath" not in options:
            raise RuntimeError(f"{self.path} has no SyzygyPath option (options: {options})")
        self.options = options
        self.send(f"setoption name SyzygyPath value {self.syzygy}")
        if self.hash_mb and "Hash" in options:
            self.send(f"setoption name Hash value {self.hash_mb}")
        self.send("isready")
        self.wait_for("readyok")

    @staticmethod
    def _pump(proc, lines):
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def send(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()

    def wait_for(self, prefix):
        got = []
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no '{prefix}' within {self.timeout}s")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise EOFError(f"engine exited waiting for '{prefix}'")
            got.append(line)
            if line.split(" ", 1)[0] == prefix:
                return got

    def new_game(self):
        self.send("ucinewgame")
        self.send("isready")
        self.wait_for("readyok")

    def best_move(self, fen, moves, depth):
        cmd = f"position fen {fen}"
        if moves:
            cmd += " moves " + " ".join(moves)
        self.send(cmd)
        self.send(f"go depth {depth}")
        lines = self.wait_for("bestmove")
        score = None
        for line in lines:
            w = line.split()
            if w and w[0] == "info" and "score" in w:
                i = w.index("score")
                score = " ".join(w[i + 1:i + 3])
        return lines[-1].split()[1], score

    def restart(self):
        self.close()
        self.start()

    def close(self):
        if self.proc and self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.wait(timeout=5)
            except Exception:
                self.proc.kill()
                self.proc.wait()


# ----------------------------------------------------------------------------
# A game


def winner_wdl(tb, board, winner):
    """WDL of the position from the winner's side (mate and stalemate exact)."""
    if board.is_checkmate():
        return -2 if board.turn == winner else 2
    if board.is_stalemate() or board.is_insufficient_material():
        return 0
    wdl = tb.probe_wdl(board)
    return wdl if board.turn == winner else -wdl


def winner_dtz(tb, board, winner):
    dtz = tb.probe_dtz(board)
    return dtz if board.turn == winner else -dtz


def defend(tb, board, winner, mode):
    """The perfect defender's reply: the worst WDL for the winner, then the
    longest DTZ (mode dtz50: DTZ plus the clock after the reply), then the
    first in sorted UCI order."""
    replies = sorted(board.legal_moves, key=lambda m: m.uci())
    scored = []
    for m in replies:
        board.push(m)
        try:
            scored.append((winner_wdl(tb, board, winner), m))
        finally:
            board.pop()
    worst = min(w for w, _ in scored)
    candidates = [m for w, m in scored if w == worst]
    if worst != 2 or len(candidates) == 1:
        return candidates[0]
    best, best_key = None, None
    for m in candidates:
        zeroing = board.is_zeroing(m)
        board.push(m)
        try:
            if board.is_checkmate():  # cannot happen with worst == 2 for the winner to move
                continue
            d = winner_dtz(tb, board, winner)
            key = d + (0 if zeroing else board.halfmove_clock) if mode == "dtz50" else d
        finally:
            board.pop()
        if best_key is None or key > best_key:
            best, best_key = m, key
    return best


def play(engine, tb, fen, depth, max_plies, defender_mode):
    board = chess.Board(fen)
    winner = board.turn
    moves, scores = [], []
    doomed_ply = None
    engine.new_game()
    result, detail = None, None
    while result is None:
        if board.turn == winner:
            try:
                uci, score = engine.best_move(fen, moves, depth)
            except (TimeoutError, EOFError, BrokenPipeError) as e:
                engine.restart()
                result, detail = "error", f"engine: {e}"
                break
            scores.append(score)
            try:
                move = chess.Move.from_uci(uci)
            except ValueError:
                move = None
            if move is None or move not in board.legal_moves:
                result, detail = "error", f"illegal bestmove {uci}"
                break
        else:
            move = defend(tb, board, winner, defender_mode)
        board.push(move)
        moves.append(move.uci())
        # The end of the game, in the order the rules settle it.
        if board.is_checkmate():
            result = "converted" if board.turn != winner else "gave-away"
            detail = "mate" if board.turn != winner else "mated"
            break
        if board.is_stalemate():
            result, detail = "gave-away", "stalemate"
            break
        if board.is_insufficient_material():
            result, detail = "gave-away", "insufficient material"
            break
        wdl = winner_wdl(tb, board, winner)
        if wdl != 2:
            result = "gave-away"
            detail = {1: "cursed win", 0: "draw", -1: "blessed loss", -2: "loss"}[wdl]
            break
        if board.is_repetition(3):
            result, detail = "repetition", None
            break
        if board.halfmove_clock >= 100:
            result, detail = "fifty", None
            break
        if doomed_ply is None:
            dtz = abs(tb.probe_dtz(board))
            if dtz + board.halfmove_clock > 100:
                doomed_ply = len(moves)
        if len(moves) >= max_plies:
            result, detail = "error", f"no end within {max_plies} plies"
    return {"fen": fen, "depth": depth, "result": result, "detail": detail,
            "plies": len(moves), "moves": moves, "scores": scores,
            "doomed_ply": doomed_ply, "end_fen": board.fen(), "end_clock": board.halfmove_clock}


def run_worker(args, work):
    """Plays games from the shared queue `work`; returns their records."""
    engine = Engine(args.kibitz, args.syzygy, args.hash, args.move_timeout)
    out = []
    try:
        with chess.syzygy.open_tablebase(args.syzygy) as tb:
            while True:
                try:
                    ending, fen, depth = work.get_nowait()
                except queue.Empty:
                    break
                t = time.monotonic()
                g = play(engine, tb, fen, depth, args.max_plies, args.defender)
                g["ending"] = ending
                g["seconds"] = round(time.monotonic() - t, 3)
                out.append(g)
                if args.progress:
                    print(f"  {ending:8} d{depth} {g['result']:10} {g['plies']:4} plies "
                          f"{g['seconds']:7.2f}s  {fen}", file=sys.stderr, flush=True)
    finally:
        engine.close()
    return out


# ----------------------------------------------------------------------------


def repeated(g):
    """Whether any position of a game occurred twice (a repetition short of
    the third occurrence that ends it)."""
    board = chess.Board(g["fen"])
    seen = {board._transposition_key()}
    for uci in g["moves"]:
        board.push(chess.Move.from_uci(uci))
        key = board._transposition_key()
        if key in seen:
            return True
        seen.add(key)
    return False


def table(games, endings, depths, sampled):
    rows = []
    head = (f"{'ending':9} {'depth':>5} {'converted':>11} {'gave-away':>9} {'repet':>6} "
            f"{'twice':>6} {'fifty':>6} {'error':>6} {'longest':>8} {'mean':>6} {'edge':>5}")
    rows.append(head)
    rows.append("-" * len(head))

    def line(name, depth, gs):
        c = {r: sum(g["result"] == r for g in gs) for r in REASONS}
        twice = sum(repeated(g) for g in gs)
        conv = [g["plies"] for g in gs if g["result"] == "converted"]
        longest = max(conv) if conv else "-"
        mean = f"{sum(conv) / len(conv):.0f}" if conv else "-"
        edge = sum(g["result"] == "converted" and g["end_clock"] >= 90 for g in gs)
        return (f"{name:9} {depth:>5} {c['converted']:>5} / {len(gs):<3} {c['gave-away']:>9} "
                f"{c['repetition']:>6} {twice:>6} {c['fifty']:>6} {c['error']:>6} {longest!s:>8} "
                f"{mean:>6} {edge:>5}")

    for e in endings:
        for d in depths:
            gs = [g for g in games if g["ending"] == e and g["depth"] == d]
            if gs:
                rows.append(line(e, d, gs))
        if len(sampled.get(e, [])) < max(1, max(len(v) for v in sampled.values())):
            rows.append(f"{'':9} ({len(sampled.get(e, []))} won starts found)")
    rows.append("-" * len(head))
    for d in depths:
        rows.append(line("total", d, [g for g in games if g["depth"] == d]))
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kibitz", default="target/release/kibitz", help="kibitz binary (run as `PATH uci`)")
    ap.add_argument("--syzygy", default=DEFAULT_TABLES, help="table folder (default %(default)s)")
    ap.add_argument("--depths", default="1,3,6")
    ap.add_argument("--per-ending", type=int, default=20)
    ap.add_argument("--endings", default="", help="comma-separated names (KRBvKR,...); default every 4- and 5-piece table")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="games played at once (one engine each)")
    ap.add_argument("--json", default="", help="write every game here")
    ap.add_argument("--hash", type=int, default=0, help="engine Hash in MB (default: the engine's)")
    ap.add_argument("--defender", choices=("dtz", "dtz50"), default="dtz")
    ap.add_argument("--max-tries", type=int, default=2_000_000,
                    help="random placements tried per ending before giving up (rare wins: KNvKN, KBvKB...)")
    ap.add_argument("--max-plies", type=int, default=1000)
    ap.add_argument("--move-timeout", type=float, default=300.0)
    ap.add_argument("--progress", action="store_true", help="a line per game on standard error")
    ap.add_argument("--starts-from", default="", metavar="JSON",
                    help="play the starts of an earlier run's --json instead of sampling")
    ap.add_argument("--table-from", default="", metavar="JSON",
                    help="print the table of an earlier run's --json file, play nothing")
    args = ap.parse_args()
    if args.table_from:
        with open(args.table_from) as f:
            run = json.load(f)
        for g in run["games"]:
            g.setdefault("end_clock", chess.Board(g["end_fen"]).halfmove_clock)
        names = list(run["sampled"])
        sampled = {e: [None] * v["starts"] for e, v in run["sampled"].items()}
        print(table(run["games"], names, run["depths"], sampled))
        played = sum(g["seconds"] for g in run["games"])
        print(f"\n{len(run['games'])} games, {run['seconds']:.0f}s wall, "
              f"{played / max(1, len(run['games'])):.2f}s per game; kibitz {run['kibitz']}, "
              f"seed {run['seed']}, defender {run['defender']}")
        return
    depths = [int(d) for d in args.depths.split(",") if d]
    endings = endings_in(args.syzygy)
    if args.endings:
        want = [e.strip() for e in args.endings.split(",") if e.strip()]
        unknown = [e for e in want if e not in endings]
        if unknown:
            sys.exit(f"no 4- or 5-piece table {unknown} in {args.syzygy}")
        endings = [e for e in endings if e in want]
    t0 = time.monotonic()

    sampled, tries = {}, {}
    if args.starts_from:
        # The starts of an earlier run (the same positions, without the
        # sampling's minutes).
        # A run's --json, or lines `ENDING FEN` (docs/experiments/won-endings-starts.txt).
        with open(args.starts_from) as f:
            text = f.read()
        if text.lstrip().startswith("{"):
            run = json.loads(text)
            starts = [(g["ending"], g["fen"]) for g in run["games"]]
        else:
            starts = [tuple(line.split(" ", 1)) for line in text.splitlines()
                      if line.strip() and not line.startswith("#")]
        for e in endings:
            sampled[e] = list(dict.fromkeys(f for ending, f in starts if ending == e))
            tries[e] = 0
    else:
        with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for ending, fens, n in pool.map(sample_ending, [args] * len(endings), endings):
                sampled[ending], tries[ending] = fens, n
    t_sample = time.monotonic() - t0
    print(f"sampled {sum(map(len, sampled.values()))} starts from {len(endings)} endings "
          f"in {t_sample:.0f}s", file=sys.stderr)

    work = queue.Queue()
    for d in depths:
        for e in endings:
            for fen in sampled[e]:
                work.put((e, fen, d))
    games = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for out in pool.map(lambda _: run_worker(args, work), range(max(1, args.jobs))):
            games.extend(out)
    order = {(e, f, d): i for i, (e, f, d) in enumerate(
        (e, f, d) for d in depths for e in endings for f in sampled[e])}
    games.sort(key=lambda g: order[(g["ending"], g["fen"], g["depth"])])
    elapsed = time.monotonic() - t0

    text = table(games, endings, depths, sampled)
    print(text)
    played = sum(g["seconds"] for g in games)
    print(f"\n{len(games)} games, {elapsed:.0f}s wall ({t_sample:.0f}s sampling), "
          f"{played / max(1, len(games)):.2f}s per game; kibitz {args.kibitz}, seed {args.seed}, "
          f"defender {args.defender}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kibitz": args.kibitz, "syzygy": os.path.abspath(args.syzygy),
                       "seed": args.seed, "depths": depths, "per_ending": args.per_ending,
                       "defender": args.defender,
                       "sampled": {e: {"starts": len(sampled[e]), "tries": tries[e]} for e in endings},
                       "seconds": round(elapsed, 1), "games": games}, f, indent=1)


if __name__ == "__main__":
    main()
