#!/usr/bin/env python3
"""minimal_schedule.py TLBSIM ARGS... - the minimiser's result is locally minimal.

Runs `TLBSIM check ARGS...`, which must report a violation with a replay token.
Then, for every preemption (non-zero decision) of the token's schedule, and for
every pair of a preemption and one of the next four after it, replays the
schedule with those decisions replaced by 0 ("continue the current thread").
If any such replay still shows the same invariant with fewer preemptions, the
reported schedule was not minimal: FAIL. The token format is decoded and
encoded here independently of src/check/token.c (t2.<hash>.<decisions>.<fnv1a>).
"""
import re
import subprocess
import sys

DIGITS = "0123456789abcdefghijklmnopqrstuvwxy"
REACH = 4


def fnv1a(text):
    h = 2166136261
    for b in text.encode():
        h ^= b
        h = (h * 16777619) & 0xFFFFFFFF
    return h


def decode(tok):
    _, cfg, body, _ = tok.split(".")
    dec, i = [], 0
    while i < len(body):
        c = body[i]
        if c in "-z":
            j = body.index(c, i + 1)
            v = int(body[i + 1:j], 16)
            dec += [0] * v if c == "-" else [v]
            i = j + 1
        else:
            dec.append(DIGITS.index(c))
            i += 1
    return cfg, dec


def encode(cfg, dec):
    while dec and dec[-1] == 0:
        dec = dec[:-1]
    out, i = "t2.%s." % cfg, 0
    while i < len(dec):
        j = i
        while j < len(dec) and dec[j] == 0:
            j += 1
        if j - i >= 4:
            out += "-%x-" % (j - i)
            i = j
            continue
        out += DIGITS[dec[i]] if dec[i] < 35 else "z%xz" % dec[i]
        i += 1
    return out + ".%08x" % fnv1a(out)


def check(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    kind = re.search(r"^VIOLATION (\S+):", p.stdout, re.M)
    tok = re.search(r"^token: (\S+)", p.stdout, re.M)
    return p.returncode, kind.group(1) if kind else None, tok.group(1) if tok else None


def main():
    base = sys.argv[1:]
    rc, kind, tok = check(base[:1] + ["check"] + base[1:])
    if rc != 1 or not kind or not tok:
        print("minimal_schedule: FAIL: the search did not report a violation with a token")
        return 1
    cfg, dec = decode(tok)
    pre = [i for i, v in enumerate(dec) if v]
    print("violation %s, %d preemption(s): %s" % (kind, len(pre), tok))
    if encode(cfg, dec) != tok:
        print("minimal_schedule: FAIL: token does not re-encode to itself")
        return 1
    tries = [(i,) for i in pre]
    for a, i in enumerate(pre):
        tries += [(i, j) for j in pre[a + 1:a + 1 + REACH]]
    for drop in tries:
        d = list(dec)
        for i in drop:
            d[i] = 0
        t = encode(cfg, d)
        rc2, kind2, tok2 = check(base[:1] + ["check"] + base[1:] + ["--replay", t])
        if rc2 == 1 and kind2 == kind and tok2:
            n2 = sum(1 for v in decode(tok2)[1] if v)
            if n2 < len(pre):
                print("minimal_schedule: FAIL: dropping decisions %s still shows %s with "
                      "%d preemption(s)" % (list(drop), kind, n2))
                return 1
    print("minimal_schedule: PASS (%d replays)" % len(tries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
