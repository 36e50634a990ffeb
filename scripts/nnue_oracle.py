#!/usr/bin/env python3
"""Oracle harness proving kibitz's Stockfish 19 NNUE evaluation exact.
Files go to target/nnue-oracle/ by default.

positions [--out positions.tsv] [--per-source N] [--seed S]
    Samples `source<TAB>fen` lines from every kind of source in ../shared/data
    (real, Lichess, engine, Chess960, opening, edge-case and peer-suite PGN;
    EPD and perft suites): up to N positions from random plies of each file,
    duplicates (first four FEN fields) dropped, then tops up coverage from the
    games (and, for piece counts the games lack, random legal positions): each
    piece count 3..32 (200), legal en passant, just after a promotion, a pawn
    on its 7th rank, side to move in check (2000). Unreadable games and
    positions python-chess calls invalid are left out, except impossible
    checks (the perft suites use them on purpose). The same S gives the same
    file. Sources read in Chess960 mode get `:chess960` (FENs then carry
    X-FEN or Shredder-FEN castling as python-chess writes it), positions just
    after a promotion `:promo`. Prints a coverage table.

native [--engine /tmp/stockfish-oracle] [--in positions.tsv] [--out native.tsv]
    Runs the native Stockfish build patched so that with ORACLE_BRIEF=1 `eval`
    prints the raw output, its two parts and the final evaluation. Output:
    `source fen raw psqt positional final` (raw from the side to move, final
    from White's, internal units; final empty in check). First checks with
    the `d` command's position key that UCI_Chess960 on reads ordinary FENs
    (castling, en passant) exactly as off.

js [--in positions.tsv] [--sample 2500] [--out js.tsv] [--sfjs-dir target/sfjs] [--lite]
    Runs Stockfish.js 19 (fetched with `npm pack` when missing) on a random
    sample that keeps every source and category (0 = all positions), minus
    positions in check, for which it prints no NNUE lines. Output:
    `source fen raw nnue_white_pawns final_white_pawns`. --lite runs its
    lite build (stockfish-19-lite-single.js, the lite net nn-61e7af4bb97d).

compare --kibitz PATH --net NET [--native native.tsv] [--js js.tsv]
    Streams every FEN into `PATH eval --net NET -`; checks its raw output
    against the native oracle everywhere, and raw plus both pawn lines against
    Stockfish.js on its sample (and the two oracles against each other).
    `--native none` compares with Stockfish.js alone, on its sample (the
    lite net, which no native build here runs).
    Prints equal/different counts per source and per category and the first
    20 differences; exits 1 on any difference or missing output.
"""
import argparse
import collections
import io
import os
import random
import re
import subprocess
import sys
import threading
import time

import chess
import chess.pgn

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data"))
OUT = "target/nnue-oracle"
TARGETS = {"in check": 2000, "en passant": 1000, "promo": 1000, "pawn on 7th": 2000}
PIECES_TARGET = 200
RANK7 = {chess.WHITE: chess.BB_RANK_7, chess.BLACK: chess.BB_RANK_2}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def read_text(path):
    if path.endswith(".zst"):
        raw = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    else:
        raw = open(path, "rb").read()
    return raw.decode("utf-8-sig", errors="replace")


def key4(fen):
    return " ".join(fen.split()[:4])


# ---------------------------------------------------------------- categories

def board_cats(board, promo=False, chess960=False):
    cats = [f"pieces {chess.popcount(board.occupied):2d}", "white to move" if board.turn else "black to move"]
    if board.is_check():
        cats.append("in check")
    if board.ep_square is not None and board.has_legal_en_passant():
        cats.append("en passant")
    if board.pawns & board.occupied_co[board.turn] & RANK7[board.turn]:
        cats.append("pawn on 7th")
    return cats + ["promo"] * promo + ["chess960"] * chess960


def categories(src, fen):
    """Category names of one position, from its FEN and its source tags."""
    chess960 = ":chess960" in src
    return board_cats(chess.Board(fen, chess960=chess960), ":promo" in src, chess960)


def base_source(src):
    return src.split(":")[0]


# ---------------------------------------------------------------- sampling

class Reservoir:
    """Uniform sample of fixed size. Every change is journalled so that the
    positions of a game found unreadable at its end can be taken back out."""

    def __init__(self, size, rng, journal):
        self.size, self.rng, self.journal, self.seen, self.items = size, rng, journal, 0, []

    def wants(self):
        self.seen += 1
        self.journal.append((self, -1, None))
        if len(self.items) < self.size:
            return len(self.items)
        j = self.rng.randrange(self.seen)
        return j if j < self.size else -1

    def put(self, slot, item):
        self.journal.append((self, slot, self.items[slot] if slot < len(self.items) else None))
        self.items[slot:slot + 1] = [item]


class Sampler:
    def __init__(self, per_source, seed):
        self.per_source, self.seed, self.journal, self.main = per_source, seed, [], []
        rng = random.Random(f"{seed}:categories")
        self.cat = collections.defaultdict(lambda: Reservoir(3 * PIECES_TARGET, rng, self.journal))
        for c, n in TARGETS.items():
            self.cat[c] = Reservoir(2 * n, rng, self.journal)
        self.invalid = collections.Counter()

    def begin_source(self, name):
        self.res = Reservoir(self.per_source, random.Random(f"{self.seed}:{name}"), self.journal)
        self.main.append(self.res)

    def commit(self):
        self.journal.clear()

    def rollback(self):
        for res, slot, old in reversed(self.journal):
            if slot < 0:
                res.seen -= 1
            elif old is None:
                res.items.pop()
            else:
                res.items[slot] = old
        self.journal.clear()

    def offer(self, src, board, promo=False):
        wanted = [(self.res, self.res.wants())]
        for c in board_cats(board, promo):
            if c in TARGETS or c.startswith("pieces"):
                wanted.append((self.cat[c], self.cat[c].wants()))
        wanted = [(r, s) for r, s in wanted if s >= 0]
        if not wanted:
            return
        if board.status() & ~chess.STATUS_IMPOSSIBLE_CHECK:  # perft suites hold a few of those: keep them
            self.invalid[src] += 1
            return
        tag = src + (":chess960" if board.chess960 else "") + (":promo" if promo else "")
        item = (tag, board.fen())
        for r, s in wanted:
            r.put(s, item)


class GameVisitor(chess.pgn.BaseVisitor):
    """Offers every mainline position of a game to the sampler."""

    def __init__(self, sampler, src):
        self.sampler, self.src = sampler, src

    def begin_game(self):
        self.error = self.skip = self.promo = self.started = False

    def begin_variation(self):
        return chess.pgn.SKIP

    def visit_move(self, board, move):
        self.promo = move.promotion is not None

    def visit_board(self, board):
        if not self.started:
            self.started = True
            self.skip = type(board) is not chess.Board  # another variant
        if not (self.skip or self.error):
            self.sampler.offer(self.src, board, self.promo)
        self.promo = False

    def handle_error(self, error):
        self.error = True

    def end_game(self):
        if self.error or self.skip:
            self.sampler.rollback()
        self.sampler.commit()

    def result(self):
        return not self.error


def source_name(path):
    return re.sub(r"\.(zst|pgn|epd|perft|txt)(?=\.|$)", "", os.path.relpath(path, DATA))


def sources():
    dirs = [f"pgn/{k}" for k in ("real", "lichess", "engine", "chess960", "openings", "edgecases", "peer-suites")]
    return [os.path.join(DATA, d, f) for d in dirs + ["epd", "perft"]
            for f in sorted(os.listdir(os.path.join(DATA, d))) if not f.endswith((".md", ".tsv"))]


def epd_board(line, chess960):
    line = line.replace("\0", "").strip()
    if line.startswith("epd "):
        line = line[4:]
    head = line.split(";")[0].split()
    if len(head) < 4 or "/" not in head[0]:
        return None
    counters = head[4:6] if len(head) >= 6 and head[4].isdigit() and head[5].isdigit() else ["0", "1"]
    for ep in (head[3], "-"):  # a malformed en-passant field is read as none
        try:
            board = chess.Board(" ".join(head[:3] + [ep] + counters), chess960=chess960)
        except ValueError:
            continue
        board.castling_rights = board.clean_castling_rights()  # e.g. `q` without a rook on a8
        return board
    return None


def random_board(rng, n):
    """A random legal position with n pieces drawn from the usual armies."""
    pool = [(c, pt) for c in chess.COLORS for pt, k in ((1, 8), (2, 2), (3, 2), (4, 2), (5, 1)) for _ in range(k)]
    while True:
        board = chess.Board(None)
        for sq, color in zip(rng.sample(range(64), 2), chess.COLORS):
            board.set_piece_at(sq, chess.Piece(chess.KING, color))
        for color, pt in sorted(rng.sample(pool, n - 2), key=lambda p: p[1]):  # pawns first
            free = [s for s in chess.SQUARES if not board.piece_at(s) and (pt != 1 or 8 <= s < 56)]
            board.set_piece_at(rng.choice(free), chess.Piece(pt, color))
        board.turn = rng.random() < 0.5
        if board.is_valid():
            return board


def cmd_positions(args):
    t0 = time.time()
    sampler = Sampler(args.per_source, args.seed)
    for path in sources():
        src = source_name(path)
        sampler.begin_source(src)
        text = read_text(path)
        if src.startswith("pgn/"):
            handle, games, bad = io.StringIO(text, newline=None), 0, 0
            while True:
                try:
                    ok = chess.pgn.read_game(handle, Visitor=lambda: GameVisitor(sampler, src))
                except Exception:  # a game python-chess cannot read at all
                    sampler.rollback()
                    bad += 1
                    continue
                if ok is None:
                    break
                games += 1
                bad += not ok
            log(f"{src}: {games} games ({bad} unreadable), {sampler.res.seen} positions, {time.time() - t0:.0f}s")
        else:
            chess960 = any(k in src for k in ("960", "FRC", "tricky"))
            for line in text.splitlines():
                board = epd_board(line, chess960)
                if board is not None:
                    sampler.offer(src, board)
                    sampler.commit()
            log(f"{src}: {sampler.res.seen} positions")

    rows, seen = [], set()

    def add(item):
        if key4(item[1]) not in seen:
            seen.add(key4(item[1]))
            rows.append(item)
            return True
        return False

    for res in sampler.main:
        for item in res.items:
            add(item)
    have = collections.Counter(c for s, f in rows for c in categories(s, f))
    rng = random.Random(f"{args.seed}:topup")
    for c, res in sorted(sampler.cat.items(), key=lambda kv: str(kv[0])):
        need = TARGETS.get(c, PIECES_TARGET) - have[c]
        for item in rng.sample(res.items, len(res.items)):
            if need <= 0:
                break
            if add(item):
                need -= 1
                have.update(categories(*item))
    for n in range(3, 33):
        while have[f"pieces {n:2d}"] < PIECES_TARGET:
            if add(("random/legal", random_board(rng, n).fen())):
                have.update(categories(*rows[-1]))
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        f.writelines(f"{s}\t{fen}\n" for s, fen in rows)
    if sampler.invalid:
        log("invalid positions skipped:", dict(sampler.invalid))
    coverage_table(rows)
    log(f"wrote {len(rows)} positions to {args.out} in {time.time() - t0:.0f}s")


def coverage_table(rows):
    per_src = collections.Counter(base_source(s) for s, _ in rows)
    per_cat = collections.Counter(c for s, f in rows for c in categories(s, f))
    print(f"{'source':60} {'positions':>9}")
    for s, n in sorted(per_src.items()):
        print(f"{s:60} {n:9d}")
    print(f"{'total':60} {len(rows):9d}\n")
    pieces = [(c, n) for c, n in sorted(per_cat.items()) if c.startswith("pieces")]
    for i in range(0, len(pieces), 6):
        print("  ".join(f"{c}: {n:5d}" for c, n in pieces[i:i + 6]))
    print()
    for c, n in sorted(per_cat.items()):
        if not c.startswith("pieces"):
            print(f"{c:20} {n:7d}")


def read_tsv(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


# ---------------------------------------------------------------- UCI oracles

RAW_RE = re.compile(r"^NNUE evaluation\s+([+-]?\d+)\s+\(side to move")
WHITE_RE = re.compile(r"^NNUE evaluation\s+([+-]?\d+\.\d+)\s+\(white side\)")
FINAL_RE = re.compile(r"^Final evaluation\s+([+-]?\d+\.\d+)\s+\(white side\)")
NONE_RE = re.compile(r"^Final evaluation: none \(in check\)")


def spawn(argv, chunks, close, env=None):
    """Starts argv and feeds it the text chunks from a writer thread while the
    caller reads, so neither pipe can fill up and stall the other."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1 << 16,
                            env=dict(os.environ, **(env or {})))

    def writer():
        try:
            for chunk in chunks:
                proc.stdin.write(chunk)
            proc.stdin.close() if close else proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    threading.Thread(target=writer, daemon=True).start()
    return proc


def run_uci(argv, fens, setup, parse, label, env=None):
    """Sends `position fen F`, `eval`, `isready` for every FEN; the lines
    before each `readyok` belong to one position. Standard input stays open
    until the end (node exits at end of input, dropping output it still
    owes). If the engine dies, the position it was on is recorded as refused
    and a new engine carries on with the next one."""
    results, refused, i, t0 = [None] * len(fens), [], 0, time.time()
    while i < len(fens):
        chunks = ["".join(c + "\n" for c in setup) + "isready\n"]
        chunks += ("".join(f"position fen {f}\neval\nisready\n" for f in fens[k:k + 1000])
                   for k in range(i, len(fens), 1000))
        proc = spawn(argv, chunks, False, env)
        lines, ready = [], False
        for line in proc.stdout:
            if not line.startswith("readyok"):
                lines.append(line.strip())
                continue
            if not ready:
                ready, lines = True, []
                continue
            results[i] = parse(lines)
            if results[i] is None:
                refused.append((fens[i], lines))
            lines, i = [], i + 1
            if i % 10000 == 0:
                log(f"{label}: {i}/{len(fens)} {i / (time.time() - t0):.0f}/s")
            if i == len(fens):
                break
        if i < len(fens):
            log(f"{label}: engine stopped on {fens[i]}")
            refused.append((fens[i], lines))
            i += 1
        try:
            proc.stdin.write("quit\n")
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        proc.wait()
    log(f"{label}: {len(fens)} positions in {time.time() - t0:.1f}s ({len(fens) / (time.time() - t0):.0f}/s)")
    return results, refused


def parse_line(line, vals):
    """Reads one line of an `eval` trace (Stockfish's, or kibitz's) into vals."""
    if m := RAW_RE.match(line):
        vals["raw"] = str(int(m.group(1)))
    elif m := WHITE_RE.match(line):
        vals["white"] = m.group(1)
    elif m := FINAL_RE.match(line):
        vals["final"] = m.group(1)
    elif NONE_RE.match(line):
        vals["final"] = "none"
    elif line.startswith("NNUE parts "):
        vals["psqt"], vals["positional"] = (str(int(x)) for x in line.split()[2:4])
    elif line.startswith("Final evaluation internal "):
        vals["internal"] = str(int(line.split()[3]))


def parse_native(lines):
    v = {}
    for line in lines:
        parse_line(line, v)
    final = "" if v.get("final") == "none" else v.get("internal")
    return None if None in (v.get("raw"), v.get("psqt"), final) else [v["raw"], v["psqt"], v["positional"], final]


def parse_js(lines):
    v = {}
    for line in lines:
        parse_line(line, v)
    if v.get("final") == "none":
        return ["", "", ""]
    return None if None in (v.get("raw"), v.get("white"), v.get("final")) else [v["raw"], v["white"], v["final"]]


def check_chess960_reading(engine, rows):
    """Position keys of ordinary FENs (castling and en passant included) must
    not change when UCI_Chess960 is on."""
    fens = [f for s, f in rows if ":chess960" not in s and (f.split()[2] != "-" or f.split()[3] != "-")][:500]
    keys = []
    for on in ("false", "true"):
        cmds = ["uci", f"setoption name UCI_Chess960 value {on}"]
        cmds += [c for f in fens for c in (f"position fen {f}", "d")] + ["quit"]
        out = subprocess.run([engine], input="\n".join(cmds) + "\n", capture_output=True, text=True).stdout
        keys.append([line.split()[1] for line in out.splitlines() if line.startswith("Key:")])
    same = keys[0] == keys[1] and len(keys[0]) == len(fens)
    log(f"UCI_Chess960 on/off: {len(fens)} ordinary FENs with castling or en passant, keys {'equal' if same else 'DIFFER'}")
    if not same:
        sys.exit("UCI_Chess960 changes how ordinary FENs are read")


def cmd_native(args):
    t0 = time.time()
    while not os.path.exists(args.engine) and time.time() - t0 < 600:
        log(f"waiting for {args.engine}")
        time.sleep(20)
    rows = read_tsv(args.inp)
    check_chess960_reading(args.engine, rows)
    setup = ["uci", "setoption name UCI_Chess960 value true"]
    results, refused = run_uci([args.engine], [f for _, f in rows], setup, parse_native, "native",
                               {"ORACLE_BRIEF": "1"})
    write_results(args.out, rows, results, refused)


def write_results(out, rows, results, refused):
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        for (src, fen), r in zip(rows, results):
            if r is not None:
                f.write("\t".join([src, fen, *r]) + "\n")
    log(f"wrote {sum(r is not None for r in results)} rows to {out}; refused {len(refused)}")
    for fen, lines in refused[:10]:
        log(f"  refused: {fen}: {lines[-3:]}")


def stratified_sample(keys, size, rng):
    """Random sample of indices into keys (each a list of a source and its
    categories) that first takes a few of every source and category."""
    order = list(range(len(keys)))
    rng.shuffle(order)
    if size <= 0 or size >= len(keys):
        return order
    quota = collections.defaultdict(lambda: 25, {"chess960": 150, "en passant": 100, "promo": 100, "pawn on 7th": 100})
    taken, chosen = collections.Counter(), []
    for k in order:
        if any(taken[c] < quota[c] for c in keys[k]):
            chosen.append(k)
            taken.update(keys[k])
    chosen = chosen[:size]
    picked = set(chosen)
    chosen += [k for k in order if k not in picked][: size - len(chosen)]
    return chosen


def ensure_sfjs(d, lite=False):
    name = "stockfish-19-lite-single.js" if lite else "stockfish-19-single.js"
    script = os.path.join(d, "package", "bin", name)
    if not os.path.exists(script):
        os.makedirs(d, exist_ok=True)
        log(f"fetching stockfish@19.0.0 into {d}")
        subprocess.run(["npm", "pack", "stockfish@19.0.0"], cwd=d, check=True, capture_output=True)
        subprocess.run(["tar", "xzf", "stockfish-19.0.0.tgz"], cwd=d, check=True)
    return script


def cmd_js(args):
    t0 = time.time()
    script = ensure_sfjs(args.sfjs_dir, args.lite)
    rows = read_tsv(args.inp)
    keys = [[base_source(s), *categories(s, f)] for s, f in rows]
    ok = [k for k in range(len(rows)) if "in check" not in keys[k]]
    log(f"left out {len(rows) - len(ok)} positions in check (Stockfish.js prints no NNUE lines for them)")
    pick = stratified_sample([keys[k] for k in ok], args.sample, random.Random(f"{args.seed}:js"))
    sample = [rows[ok[k]] for k in sorted(pick)]
    setup = ["uci", "setoption name UCI_Chess960 value true"]
    results, refused = run_uci(["node", script], [f for _, f in sample], setup, parse_js, "Stockfish.js")
    log(f"Stockfish.js: {len(sample)} positions, {time.time() - t0:.1f}s in all (reading and sampling included)")
    write_results(args.out, sample, results, refused)
    coverage_table(sample)


# ---------------------------------------------------------------- compare

def kibitz_blocks(argv, fens):
    """Yields (fen, {raw, white, final}) per `position` block of kibitz's output
    (a block runs to the next `position` line)."""
    proc = spawn(argv, ("".join(f + "\n" for f in fens[k:k + 1000]) for k in range(0, len(fens), 1000)), True)
    fen, vals = None, {}
    for line in proc.stdout:
        line = line.strip()
        if line.startswith("position "):
            if fen is not None:
                yield fen, vals
            fen, vals = line[len("position "):], {}
        elif not line:
            # The report has blank lines of its own: a block ends at the
            # next `position` line.
            continue
        else:
            parse_line(line, vals)
    if fen is not None:
        yield fen, vals
    if proc.wait() != 0:
        log(f"kibitz exited with status {proc.returncode}")
        yield None, None


def cmd_compare(args):
    t0 = time.time()
    js_rows = read_tsv(args.js) if args.js else []
    js = {key4(r[1]): r[2:] for r in js_rows}
    if args.native == "none":
        if not js_rows:
            sys.exit("--native none needs --js")
        # Stockfish.js's raw value stands in for the native one; its
        # sample has no position in check.
        native = [(r[0], r[1], r[2], "", "", "js") for r in js_rows]
    else:
        native = read_tsv(args.native)
    by_src, by_cat = collections.defaultdict(collections.Counter), collections.defaultdict(collections.Counter)
    diffs, fen_echo, n = [], 0, 0
    oracle_diffs = 0
    blocks = kibitz_blocks([args.kibitz, "eval", "--net", args.net, "-"], [r[1] for r in native])
    for (src, fen, raw, psqt, positional, final), (kfen, got) in zip(native, blocks):
        if kfen is None:
            break
        n += 1
        fen_echo += key4(kfen) != key4(fen)
        bad = []
        if got.get("raw") != raw:
            bad.append(f"raw {got.get('raw')} != native {raw} (psqt {psqt}, positional {positional})")
        if (got.get("final") == "none") != (final == ""):
            bad.append(f"final {got.get('final')} but native {'in check' if final == '' else 'not in check'}")
        j = js.get(key4(fen))
        if j and j[0]:
            oracle_diffs += j[0] != raw
            for name, want in (("white", j[1]), ("final", j[2])):
                if got.get(name) is None or got[name] == "none" or round(float(got[name]) * 100) != round(float(want) * 100):
                    bad.append(f"{name} {got.get(name)} != js {want}")
        ok = "equal" if not bad else "different"
        by_src[base_source(src)][ok] += 1
        for c in categories(src, fen) + (["js sample"] if j else []):
            by_cat[c][ok] += 1
        if bad and len(diffs) < 20:
            diffs.append((src, fen, "; ".join(bad)))
        if n % 20000 == 0:
            log(f"compare: {n}/{len(native)} {n / (time.time() - t0):.0f}/s")
    missing, failed = len(native) - n, False
    for kfen, _ in blocks:  # anything after the last expected block
        failed = True
        log("kibitz failed" if kfen is None else f"kibitz printed an extra block for {kfen}")
    for title, table in (("source", by_src), ("category", by_cat)):
        print(f"{title:60} {'equal':>8} {'different':>9}")
        for k in sorted(table):
            print(f"{k:60} {table[k]['equal']:8d} {table[k]['different']:9d}")
        print()
    ndiff = sum(t["different"] for t in by_src.values())
    for src, fen, what in diffs:
        print(f"DIFF {src} {fen}: {what}")
    print(f"{n} positions compared ({sum(1 for r in native if key4(r[1]) in js)} with Stockfish.js): "
          f"{ndiff} different, {missing} missing from kibitz's output, {fen_echo} echoed FENs differ, "
          f"{oracle_diffs} raw values where the two oracles disagree; {time.time() - t0:.0f}s")
    sys.exit(1 if ndiff or missing or failed or oracle_diffs else 0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("positions")
    a.add_argument("--out", default=f"{OUT}/positions.tsv")
    a.add_argument("--per-source", type=int, default=5700)
    a.add_argument("--seed", type=int, default=1)
    for name in ("native", "js"):
        a = sub.add_parser(name)
        a.add_argument("--in", dest="inp", default=f"{OUT}/positions.tsv")
        a.add_argument("--out", default=f"{OUT}/{name}.tsv")
    sub.choices["native"].add_argument("--engine", default="/tmp/stockfish-oracle")
    a.add_argument("--sample", type=int, default=2500)
    a.add_argument("--seed", type=int, default=1)
    a.add_argument("--sfjs-dir", default="target/sfjs")
    a.add_argument("--lite", action="store_true", help="Stockfish.js 19's lite build (its lite net)")
    a = sub.add_parser("compare")
    a.add_argument("--kibitz", required=True)
    a.add_argument("--net", required=True)
    a.add_argument("--native", default=f"{OUT}/native.tsv")
    a.add_argument("--js")
    args = p.parse_args()
    {"positions": cmd_positions, "native": cmd_native, "js": cmd_js, "compare": cmd_compare}[args.cmd](args)


if __name__ == "__main__":
    main()
