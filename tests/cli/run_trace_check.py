#!/usr/bin/env python3
"""run_trace_check.py FILE FROM_NS TO_NS - validate the timeline of
`tlbsim run --trace` (Chrome trace-event JSON, docs/output.md "Run timeline").

TO_NS "-" means no end. Rules:
  - the file is JSON: a traceEvents list and otherData naming the window;
  - every X slice has name, pid, tid, ts, dur >= 0 on a track ((pid, tid))
    named by a thread_name metadata event;
  - on each (pid, tid) track the X slices nest: no two overlap partially
    (Perfetto misdraws partial overlaps);
  - every timestamp, and every slice's end, lies in [FROM, TO];
  - every flow start "s" has exactly one finish "f" with the same id, at the
    same time on another track, and a "... received" instant there.
Prints "run_trace_check: PASS" or "run_trace_check: FAIL: ..." lines; with
--summary, one line of counts (what the calling test then requires).
"""
import json
import os
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "check"))
from trace_check import check_nesting  # noqa: E402  (the slice-nesting rule, shared)


def ns(v):
    return Decimal(v) * 1000  # ts and dur are microseconds, exact to the ns


def check(path, lo, hi):
    errs = []
    d = json.load(open(path), parse_float=Decimal)
    ev = d.get("traceEvents")
    if not isinstance(ev, list):
        return [f"{path}: no traceEvents list"], {}
    od = d.get("otherData", {})
    if od.get("window_from_ns") != lo or od.get("window_to_ns") != hi:
        errs.append(f"{path}: otherData window {od.get('window_from_ns')}..{od.get('window_to_ns')}"
                    f" is not {lo}..{hi}")
    named = {(e["pid"], e["tid"]) for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
    tracks = {}
    counts = {"X1": 0, "X2": 0, "C": 0, "flows": 0, "names": set()}
    for e in ev:
        ph = e.get("ph")
        if ph == "M":
            continue
        if "ts" not in e:
            errs.append(f"{path}: event without ts: {e}")
            continue
        t = ns(e["ts"])
        end = t + (ns(e["dur"]) if ph == "X" else 0)
        if t < lo or (hi is not None and end > hi) or (hi is not None and t >= hi and ph != "X"):
            errs.append(f"{path}: {e.get('name')} at [{t}, {end}] ns is outside the window "
                        f"[{lo}, {hi})")
        if ph == "C":
            counts["C"] += 1
            counts["names"].add("C:" + e["name"])
        if ph != "X":
            continue
        for k in ("name", "pid", "tid", "ts", "dur"):
            if k not in e:
                errs.append(f"{path}: slice without {k}: {e}")
        key = (e["pid"], e["tid"])
        if key not in named:
            errs.append(f"{path}: slice on unnamed track {key}")
        if e["dur"] < 0:
            errs.append(f"{path}: negative dur: {e}")
        counts["X%d" % e["pid"]] = counts.get("X%d" % e["pid"], 0) + 1
        counts["names"].add("%d:%s" % (e["pid"], e["name"]))
        tracks.setdefault(key, []).append((t, -(end - t), e["name"]))
    check_nesting(path, tracks, errs)
    starts = [e for e in ev if e.get("ph") == "s"]
    finishes = {}
    for e in ev:
        if e.get("ph") == "f":
            finishes.setdefault(e["id"], []).append(e)
    received = {(e["pid"], e["tid"], e["ts"]) for e in ev
                if e.get("ph") == "i" and e["name"].endswith(" received")}
    for s in starts:
        fs = finishes.get(s["id"], [])
        if len(fs) != 1:
            errs.append(f"{path}: flow {s['id']} has {len(fs)} finishes")
            continue
        f = fs[0]
        if (f["pid"], f["tid"]) == (s["pid"], s["tid"]) or f["ts"] != s["ts"]:
            errs.append(f"{path}: flow {s['id']} finishes on its own track or at another time")
        if (f["pid"], f["tid"], f["ts"]) not in received:
            errs.append(f"{path}: flow {s['id']} has no 'received' instant on its target track")
        counts["names"].add("flow:" + s["name"])
    counts["flows"] = len(starts)
    if len(finishes) != len(starts):
        errs.append(f"{path}: {len(finishes)} flow finishes for {len(starts)} starts")
    counts["records"] = od.get("records")
    return errs, counts


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--summary"]
    path, lo, hi = args[0], int(args[1]), None if args[2] == "-" else int(args[2])
    errs, counts = check(path, lo, hi)
    for e in errs[:20]:
        print("run_trace_check: FAIL:", e)
    if "--summary" in sys.argv:
        print("summary:", " ".join(sorted(counts.get("names", []))), "flows=%s" % counts.get("flows"),
              "records=%s" % counts.get("records"))
    if errs:
        sys.exit(1)
    print("run_trace_check: PASS")
