#!/usr/bin/env python3
"""trace_check.py FILE... - validate Chrome trace-event JSON written by tlbsim.

Rules (Perfetto / Chrome trace-event format, docs/checker.md):
  - the file is JSON with a traceEvents list and otherData;
  - every X slice has name, pid, tid, ts >= 0 and dur >= 0, on a track (tid)
    named by a thread_name metadata event;
  - per track, X slices nest properly: sorted by (ts, -dur), each slice either
    starts after the enclosing one ends or ends within it (Perfetto drops or
    misdraws overlapping slices);
  - every flow start ("s") has exactly one finish ("f") with the same id, on
    another track, at the same ts, and a "received" instant on that track.
Prints "trace_check: PASS" or "trace_check: FAIL: ..." lines.
"""
import json
import sys
from decimal import Decimal

def check_nesting(path, tracks, errs):
    """tracks: key -> [(ts, -dur, name)]; append an error per track where two
    slices overlap partially (also used by tests/cli/run_trace_check.py)"""
    for key, sl in tracks.items():
        sl.sort()
        stack = []          # ends of the open slices, innermost last
        for ts, ndur, name in sl:
            end = ts - ndur
            while stack and stack[-1] <= ts:
                stack.pop()  # closed before this one starts
            if stack and end > stack[-1]:
                errs.append(f"{path}: track {key}: slice {name} [{ts}, {end}) overlaps "
                            f"an enclosing slice that ends at {stack[-1]}")
                break
            stack.append(end)


def check(path):
    errs = []
    d = json.load(open(path), parse_float=Decimal)
    ev = d.get("traceEvents")
    if not isinstance(ev, list):
        return [f"{path}: no traceEvents list"]
    if "otherData" not in d:
        errs.append(f"{path}: no otherData")
    named = {e["tid"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
    tracks = {}
    for e in ev:
        if e.get("ph") != "X":
            continue
        for k in ("name", "pid", "tid", "ts", "dur"):
            if k not in e:
                errs.append(f"{path}: slice without {k}: {e}")
        if e["tid"] not in named:
            errs.append(f"{path}: slice on unnamed track {e['tid']}")
        ts, dur = Decimal(e["ts"]), Decimal(e["dur"])
        if ts < 0 or dur < 0:
            errs.append(f"{path}: negative ts/dur: {e}")
        tracks.setdefault(e["tid"], []).append((ts, -dur, e["name"]))
    check_nesting(path, tracks, errs)
    starts = [e for e in ev if e.get("ph") == "s"]
    finishes = {}
    for e in ev:
        if e.get("ph") == "f":
            finishes.setdefault(e["id"], []).append(e)
    received = {(e["tid"], e["ts"]) for e in ev if e.get("ph") == "i" and "received" in e["name"]}
    for s in starts:
        fs = finishes.get(s["id"], [])
        if len(fs) != 1:
            errs.append(f"{path}: flow {s['id']} has {len(fs)} finishes")
            continue
        f = fs[0]
        if f["tid"] == s["tid"] or f["ts"] != s["ts"]:
            errs.append(f"{path}: flow {s['id']} finishes on its own track or at another time")
        if (f["tid"], f["ts"]) not in received:
            errs.append(f"{path}: flow {s['id']} has no 'received' instant on track {f['tid']}")
    if len(finishes) != len(starts):
        errs.append(f"{path}: {len(finishes)} flow finishes for {len(starts)} starts")
    return errs

if __name__ == "__main__":
    errs = []
    for p in sys.argv[1:]:
        errs += check(p)
    for e in errs:
        print("trace_check: FAIL:", e)
    if errs:
        sys.exit(1)
    print(f"trace_check: PASS ({len(sys.argv) - 1} file(s))")
