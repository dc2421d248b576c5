#!/usr/bin/env python3
"""Randomized robustness of the tlbsim commands that read a user's files.

harness.py draws command lines; this draws the files they name. From real
files the binary writes (a sweep's result CSV, with and without --seeds, and
the dump of every built-in profile) it makes mutations - extreme and
ulp-close numbers, non-numbers, values at and past each bound, quoting,
byte order marks, CR line ends, NUL bytes, long lines, truncation, dropped,
duplicated and renamed columns and keys - and runs them through

  * tlbsim plot FILE.csv --x COL --y COL [--by|--facet|--where|--logx] [-o F.svg]
  * tlbsim merge A.csv B.csv ... [-o OUT.csv]
  * tlbsim sweep ... -o FILE.csv (resuming from the mutated file)
  * tlbsim run mmap8 --profile FILE.prof and tlbsim list profiles --dump FILE.prof
  * tlbsim check|run|test FILE.tlbs: the repository's scenario files with
    numbers moved to extremes, lines dropped, repeated or swapped, other
    profiles (libFuzzer's fuzz_scenario feeds the compiler arbitrary bytes;
    these compile, and run)

checking the contracts of README.md and docs/output.md:

  * exit 0, or 2 with exactly one line on stderr (a scenario's compiler:
    up to 10 FILE:LINE:COL: lines) and nothing on stdout; never
    a signal, a sanitizer report, 3, or a run past the time cap (a hang);
  * -o: the file exists after exit 0; after exit 2 a new file was not
    created and an existing one (sweep's resume) is unchanged; no temporary
    file is left beside it;
  * plot: the SVG parses as XML and has no NaN or infinite coordinate or
    label; merge: the CSV has the inputs' header;
  * run --profile FILE --json: one JSON document naming the file's profile;
  * scenarios: exit 1 only from check (a violation, its JSON not null) or
    test (a failed expectation); exit 3 only with "memory" in the message
    (--max-memory 512M);
  * the unmutated files are accepted (exit 0).

Case i depends on (--seed, i) only. Usage:
  files.py --tlbsim BIN [--seed S] [--count N] [--start I] [--jobs J]
           [--timeout T] [--scratch DIR] [--verbose]
Exit 0 when every case met the contracts, 1 otherwise (each failure printed
with the command and the file, kept in the scratch directory).
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

# numbers that have broken or could break a reader of result files (the plot
# tick loop that stepped by less than an ulp: 1 next to 1.0000000000000002,
# one point at 1e20)
ODD_NUMBERS = ["0", "-0", "1", "-1", "1e20", "-1e20", "1e308", "-1e308", "1e-320", "1e400",
               "-1e400", "nan", "inf", "-inf", "", "abc", "1.0000000000000002", "0.9999999999999999",
               "9007199254740993", "18446744073709551616", "0x10", " 5", "5 ", "+5", "1,5",
               "\"7\"", "1e-9", "123456789012345678901234567890", "4.9e-324", "2.2250738585072014e-308"]
# values of profile keys (digits-only integers, and what is not)
ODD_PARAMS = ["0", "1", "2", "3", "7", "8", "63", "64", "65", "100", "101", "1023", "1024",
              "1025", "4096", "65536", "65537", "1000000000", "1000000001", "4294967296",
              "9223372036854775807", "9223372036854775808", "-1", "", " 5", "5x", "1e3", "0x10",
              "+5", "99999999999999999999999"]


def run(argv, timeout, cwd, env=None):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           cwd=cwd, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or b"", e.stderr or b""
    except OSError as e:                # the binary went missing (rebuilt?)
        return "oserror", b"", str(e).encode()


class Bases:
    """The unmutated files, written by the binary under test."""

    def __init__(self, tlbsim, d, timeout):
        self.dir = d
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1")
        self.csv = {}
        for name, extra in (("plain", []), ("seeds", ["--seeds", "2"])):
            path = os.path.join(d, "base-%s.csv" % name)
            rc, out, err = run([tlbsim, "sweep", "mmap8", "--iters", "2", "--grid", "threads=1,2,3",
                                "--policy", "nested=v2", "--policy", "nested=fullmm"] + extra +
                               ["-o", path], max(timeout, 120), d, env)
            if rc != 0:
                raise SystemExit("files: cannot make the base CSV: exit %r %s" % (rc, err[-300:]))
            self.csv[name] = open(path, "rb").read()
        rc, out, err = run([tlbsim, "list", "profiles"], timeout, d, env)
        names = re.findall(r"^  ?([A-Za-z0-9_.-]+)\s", out.decode(errors="replace"), re.M)
        if not names:
            names = re.findall(r"^([A-Za-z0-9_.-]+)\s", out.decode(errors="replace"), re.M)
        self.prof = {}
        for n in names:
            rc, out, err = run([tlbsim, "list", "profiles", "--dump", n], timeout, d, env)
            if rc == 0 and out.startswith(b"#"):
                self.prof[n] = out
        if not self.prof:
            raise SystemExit("files: no profile could be dumped (tlbsim list profiles)")
        self.scen = {}
        for dp, dn, fn in os.walk(os.path.join(ROOT, "scenarios")):
            for f in fn:
                if f.endswith(".tlbs"):
                    self.scen[os.path.relpath(os.path.join(dp, f), ROOT)] = \
                        open(os.path.join(dp, f), "rb").read()


def csv_rows(data):
    return [l.split(b",") for l in data.rstrip(b"\n").split(b"\n")]


def csv_join(rows):
    return b"\n".join(b",".join(r) for r in rows) + b"\n"


def mutate_csv(r, data):
    """1-3 edits of a result CSV; the header's column names are kept by most."""
    rows = csv_rows(data)
    for _ in range(r.choice([1, 1, 2, 3])):
        k = r.randrange(17)
        body = rows[1:]
        if k <= 3 and body:             # a field, to an odd number
            row = r.choice(body)
            row[r.randrange(len(row))] = r.choice(ODD_NUMBERS).encode()
        elif k == 4 and body:           # one column, the same or ulp-close values
            c = r.choice([3, 3, r.randrange(len(rows[0]))])
            vals = r.choice([["1"], ["1e20"], ["-1e20"], ["0"], ["1e-320"],
                             ["1", "1.0000000000000002", "1.0000000000000004"],
                             ["1e20", "100000000000000016384", "100000000000000032768"],
                             ["-5", "-5.000000000000001", "-5.000000000000002"]])
            for i, row in enumerate(body):
                row[c] = vals[i % len(vals)].encode()
        elif k == 5 and body:           # a row dropped or repeated
            if r.random() < 0.5:
                rows.remove(r.choice(body))
            else:
                rows.append(list(r.choice(body)))
        elif k == 6:                    # a column renamed, emptied or duplicated
            c = r.randrange(len(rows[0]))
            rows[0][c] = r.choice([b"", rows[0][(c + 1) % len(rows[0])], b"x y", b"\xff",
                                   b"wall_ns", b"threads"])
        elif k == 7 and body:           # a field too many or too few
            row = r.choice(body)
            if r.random() < 0.5:
                row.append(b"1")
            elif len(row) > 1:
                row.pop()
        elif k == 8:                    # many rows
            for i in range(r.choice([100, 1000])):
                row = list(r.choice(body or rows))
                if body:
                    row[3] = str(100 + i).encode()
                rows.append(row)
        elif k == 9 and body:           # a quoted field: comma, quote, newline
            row = r.choice(body)
            row[r.randrange(len(row))] = r.choice([b'"a,b"', b'"a""b"', b'"a\nb"', b'"5"',
                                                   b'"unclosed', b'a"b'])
        elif k == 10 and body:          # a long field
            row = r.choice(body)
            row[r.randrange(len(row))] = b"7" * r.choice([1000, 100000])
        elif k == 11:
            rows = rows[:1]             # the header alone
        elif k == 12 and body:          # one row, its threads at 1e20
            rows = rows[:2]
            rows[1][3] = r.choice([b"1e20", b"1e300", b"-1e20"])
    out = csv_join(rows)
    k = r.randrange(12)
    if k == 0:
        out = b"\xef\xbb\xbf" + out
    elif k == 1:
        out = out.replace(b"\n", b"\r\n")
    elif k == 2:
        out = out[:r.randrange(len(out) + 1)]   # truncated
    elif k == 3:
        i = r.randrange(len(out) + 1)
        out = out[:i] + b"\0" + out[i:]
    elif k == 4:
        out = b""
    elif k == 5:
        out = out.rstrip(b"\n")         # no final newline
    return out


def mutate_profile(r, data, keys):
    lines = data.split(b"\n")
    for _ in range(r.choice([1, 1, 2, 3])):
        k = r.randrange(12)
        idx = [i for i, l in enumerate(lines) if b"=" in l and not l.startswith(b"#")]
        if k <= 4 and idx:              # a value, to an odd one
            i = r.choice(idx)
            key = lines[i].split(b"=")[0]
            lines[i] = key + b"= " + r.choice(ODD_PARAMS).encode()
        elif k == 5 and idx:            # a line dropped (a required key, maybe)
            del lines[r.choice(idx)]
        elif k == 6 and idx:            # a line repeated
            lines.append(lines[r.choice(idx)])
        elif k == 7:                    # an unknown key or junk
            lines.append(r.choice([b"bogus = 1", b"junk", b"= 5", b"tlb_sets =", b"#", b"  # c",
                                   b"name = a b", b"arch = riscv", b"page_size = 8192",
                                   b"cpus = 0", b"cpus = 1025"]))
        elif k == 8:                    # a long line
            lines.append(b"description = " + b"d" * r.choice([500, 1010, 1021, 1022, 5000]))
        elif k == 9 and idx:            # a key's value moved to an extreme of another key
            lines.append(("%s = %s" % (r.choice(keys), r.choice(ODD_PARAMS))).encode())
        elif k == 10:
            lines = [l.replace(b" = ", b"=") for l in lines]
        elif k == 11:
            lines.insert(r.randrange(len(lines) + 1), b"\0")
    out = b"\n".join(lines)
    k = r.randrange(10)
    if k == 0:
        out = out.replace(b"\n", b"\r\n")
    elif k == 1:
        out = out[:r.randrange(len(out) + 1)]
    elif k == 2:
        out = b"\xef\xbb\xbf" + out
    return out


ODD_INTS = ["0", "1", "2", "3", "7", "64", "1000", "4096", "65536", "1000000", "4294967296",
            "9223372036854775807", "18446744073709551616", "99999999999999999999"]


def mutate_scenario(r, data, profiles):
    lines = data.split(b"\n")
    for _ in range(r.choice([1, 1, 2, 3])):
        k = r.randrange(8)
        if k <= 2:                      # a number, to an odd one
            spots = [(i, m) for i, l in enumerate(lines) if not l.lstrip().startswith(b"#")
                     for m in re.finditer(rb"(?<![A-Za-z0-9_])[0-9]+(?![A-Za-z0-9_])", l)]
            if spots:
                i, m = r.choice(spots)
                lines[i] = lines[i][:m.start()] + r.choice(ODD_INTS).encode() + lines[i][m.end():]
        elif k == 3 and len(lines) > 1:     # a line dropped
            del lines[r.randrange(len(lines))]
        elif k == 4 and lines:          # a line repeated
            i = r.randrange(len(lines))
            lines.insert(i, lines[i])
        elif k == 5 and len(lines) > 1:     # two lines swapped
            i, j = r.randrange(len(lines)), r.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif k == 6:                    # another profile
            lines = [b"profile " + r.choice(profiles).encode() if l.startswith(b"profile ")
                     else l for l in lines]
        else:                           # a statement's unit or flag changed
            subs = [(b" page,", b" pages,"), (b"1 page", b"512 pages"), (b"private", b"shared"),
                    (b"dontneed", b"free"), (b"store(", b"load("), (b"join all", b""),
                    (b"fixed", b""), (b"read)", b"none)")]
            a, b = r.choice(subs)
            lines = [l.replace(a, b, 1) for l in lines]
    return b"\n".join(lines)


def has_sanitizer(err):
    return re.search(rb"AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer",
                     err) is not None


def temp_left(d, keep):
    return [f for f in os.listdir(d) if f not in keep and (".tmp" in f or f.startswith("."))]


def case(i, a, bases):
    r = random.Random("%d/%d" % (a.seed, i))
    d = os.path.join(a.scratch, "f%d" % i)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    fails = []
    kind = r.choice(["plot", "plot", "plot", "merge", "merge", "sweep", "profile", "profile",
                     "scenario", "scenario", "scenario"])
    mutated = r.random() < 0.85
    argv = [a.tlbsim]
    out_path = None
    existed = None
    if kind in ("plot", "merge", "sweep"):
        which = r.choice(["plain", "seeds"])
        base = bases.csv[which]
        data = mutate_csv(r, base) if mutated else base
        with open(os.path.join(d, "in.csv"), "wb") as f:
            f.write(data)
        cols = [c.decode(errors="replace") for c in csv_rows(base)[0]]
        if kind == "plot":
            xcol = r.choice(["threads", "threads", "policy", "seed", r.choice(cols)])
            ycol = r.choice(["wall", "wall", "sys", "ipi_sent", r.choice(cols)])
            argv += ["plot", "in.csv", "--x", xcol, "--y", ycol]
            if r.random() < 0.5:
                argv += ["--by", "policy"]
            elif r.random() < 0.3:
                argv += ["--facet", "policy"]
            if r.random() < 0.2:
                argv += ["--where", "policy=nested=v2"]
            if r.random() < 0.3:
                argv += ["--logx"]
            if r.random() < 0.2:
                argv += ["--title", r.choice(["t", "", "<&>\"'", "\u00e9" * 300])]
            if not mutated:
                argv = [a.tlbsim, "plot", "in.csv", "--x", "threads", "--y", "wall",
                        "--by", "policy"]
        elif kind == "merge":
            other = mutate_csv(r, base) if mutated and r.random() < 0.5 else base
            with open(os.path.join(d, "b.csv"), "wb") as f:
                f.write(other)
            files = ["in.csv", "b.csv"] + (["in.csv"] if r.random() < 0.2 else [])
            argv += ["merge"] + files
        else:
            # resume: the grid and options that wrote the base file
            argv += ["sweep", "mmap8", "--iters", "2", "--grid", "threads=1,2,3", "--policy",
                     "nested=v2", "--policy", "nested=fullmm"]
            if which == "seeds":
                argv += ["--seeds", "2"]
            argv += ["-o", "in.csv"]
            out_path = os.path.join(d, "in.csv")
            existed = data
        if kind != "sweep" and r.random() < 0.6:
            argv += ["-o", "out.%s" % ("svg" if kind == "plot" else "csv")]
            out_path = os.path.join(d, argv[-1])
    elif kind == "scenario":
        name = r.choice(sorted(bases.scen))
        base = bases.scen[name]
        data = mutate_scenario(r, base, sorted(bases.prof)) if mutated else base
        with open(os.path.join(d, "in.tlbs"), "wb") as f:
            f.write(data)
        sub = r.choice(["check", "check", "run", "test"])
        if sub == "check":
            argv += ["check", "in.tlbs", "--runs", r.choice(["5", "50"]), "--time-limit", "2",
                     "--max-memory", "512M", "--json"]
        elif sub == "run":
            argv += ["run", "in.tlbs", "--time-limit", "2", "--max-memory", "512M", "--json"]
        else:
            argv += ["test", "in.tlbs", "--time-limit", "1"]
    else:
        name = r.choice(sorted(bases.prof))
        base = bases.prof[name]
        keys = [l.split(b"=")[0].strip().decode() for l in base.split(b"\n")
                if b"=" in l and not l.startswith(b"#")]
        data = mutate_profile(r, base, keys) if mutated else base
        with open(os.path.join(d, "in.prof"), "wb") as f:
            f.write(data)
        if r.random() < 0.8:
            argv += ["run", "mmap8", "--iters", "1", "--threads", "2", "--profile", "in.prof",
                     "--json"]
        else:
            argv += ["list", "profiles", "--dump", "in.prof"]
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:exitcode=87")
    rc, out, err = run(argv, a.timeout, d, env)
    cmd = " ".join(argv[1:])
    if rc == "timeout":
        fails.append("past the %d s cap (a hang?)" % a.timeout)
    elif has_sanitizer(err):
        fails.append("sanitizer report: %s" % err[-600:].decode(errors="replace"))
    elif rc == 1 and kind == "scenario" and argv[1] in ("check", "test"):
        pass    # a violation, or a failed expectation of a mutated file
    elif rc == 3 and kind == "scenario" and b"memory" in err and err.count(b"\n") == 1:
        pass    # the --max-memory budget ran out, as documented
    elif rc not in (0, 2):
        fails.append("exit %r: %s" % (rc, err[-300:].decode(errors="replace")))
    elif rc == 2:
        if out:
            fails.append("exit 2 with stdout")
        lines = err.split(b"\n")[:-1]
        if kind == "scenario" and lines and all(
                re.match(rb"in\.tlbs:([0-9]+:([0-9]+:)? |( too many errors, giving up$))", l)
                for l in lines) and len(lines) <= 11 and err.endswith(b"\n"):
            pass    # a compiler's FILE:LINE:COL: lines, at most 10 (docs/scenarios.md)
        elif err.count(b"\n") != 1 or not err.endswith(b"\n"):
            fails.append("exit 2 without exactly one stderr line: %r" % err[:300])
        if not mutated:
            fails.append("the unmutated file was refused: %s" % err[:300].decode(errors="replace"))
        if out_path and existed is None and os.path.exists(out_path):
            fails.append("exit 2 created %s" % os.path.basename(out_path))
        if out_path and existed is not None and open(out_path, "rb").read() != existed:
            fails.append("exit 2 changed %s" % os.path.basename(out_path))
    if rc == 0:
        if out_path and not os.path.exists(out_path):
            fails.append("exit 0 without %s" % os.path.basename(out_path))
        body = open(out_path, "rb").read() if out_path and os.path.exists(out_path) else out
        if kind == "plot":
            try:
                ET.fromstring(body)
            except ET.ParseError as e:
                fails.append("the SVG does not parse: %s" % e)
            if re.search(rb"[\"> ,(](-?nan|-?inf)", body, re.I):
                fails.append("the SVG has a NaN or infinite number")
        elif kind in ("merge", "sweep"):
            head = body.split(b"\n", 1)[0]
            # the header of a base file, or of the (mutated) input, without
            # a byte order mark or a CR
            first = data.split(b"\n", 1)[0].rstrip(b"\r")
            if first.startswith(b"\xef\xbb\xbf"):
                first = first[3:]
            want = [csv_rows(b)[0] for b in bases.csv.values()] + [first.split(b",")]
            if head.split(b",") not in want:
                fails.append("the CSV's header is not the inputs': %r" % head[:200])
        elif kind == "scenario":
            if argv[1] != "test":
                try:
                    j = json.loads(out)
                    if argv[1] == "check" and j.get("violation") is not None:
                        fails.append("exit 0 with a violation in the JSON")
                except ValueError as e:
                    fails.append("the JSON does not parse: %s" % e)
        elif argv[1] == "run":
            try:
                j = json.loads(body)
                m = re.search(rb"^name = (.*)$", data, re.M)
                if m and j.get("profile") != m.group(1).strip().decode(errors="replace"):
                    fails.append("the JSON names profile %r" % j.get("profile"))
            except ValueError as e:
                fails.append("the JSON does not parse: %s" % e)
    # (a run killed at the cap may leave its temporary file: the cap is the failure)
    left = temp_left(d, {"in.csv", "b.csv", "in.prof", "in.tlbs", "out.svg", "out.csv"})
    if left and rc != "timeout":
        fails.append("temporary files left: %s" % left)
    if not fails and not a.keep:
        shutil.rmtree(d, ignore_errors=True)
    return i, kind, cmd, rc, fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tlbsim", default=os.path.join(ROOT, "build", "asan", "tlbsim"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=30, help="wall-time cap per run, s")
    ap.add_argument("--scratch", default=None)
    ap.add_argument("--keep", action="store_true", help="keep every case's directory")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    a.tlbsim = os.path.abspath(a.tlbsim)
    if a.scratch is None:
        a.scratch = os.path.join(tempfile.gettempdir(), "tlbsim-files-s%d" % a.seed)
    os.makedirs(a.scratch, exist_ok=True)
    bases = Bases(a.tlbsim, a.scratch, a.timeout)
    nfail = 0
    kinds = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(case, i, a, bases) for i in range(a.start, a.start + a.count)]
        for fu in futs:
            i, kind, cmd, rc, fails = fu.result()
            kinds[kind] = kinds.get(kind, 0) + 1
            if a.verbose or fails:
                print("[%d] %-7s exit %-7s %s" % (i, kind, rc, cmd[:160]))
            for f in fails:
                print("  FAIL: %s (files in %s)" % (f, os.path.join(a.scratch, "f%d" % i)))
            nfail += bool(fails)
    print("files: %d cases (%s), %d failing" % (
        a.count, ", ".join("%s %d" % kv for kv in sorted(kinds.items())), nfail))
    print("files: PASS" if not nfail else "files: FAIL")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
