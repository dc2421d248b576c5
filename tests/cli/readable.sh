#!/usr/bin/env bash
# readable.sh TLBSIM - the human table of run/compare as a person reads it
# (docs/output.md "Human table"), checked against the same run's --json:
#   * every time cell is in the unit that fits (ns, µs, ms, s) and equals
#     the JSON nanoseconds to four significant digits; counts below 10 000
#     are exact, larger ones K/M/G with four digits;
#   * idle is the percentage of the CPU time: 100 x idle_ns / (wall_ns x cpus);
#   * sys_per_op is sys_ns / ops;
#   * a compare violation note names the column's --policy;
#   * a single run draws a progress bar on stderr when it is a terminal
#     (a pty here), and prints nothing on stderr when it is not.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "readable: FAIL: $*"; fail=1; }

A=(compare mmap8 --iters 150 --threads 4 --seeds 1 --policy nested=v2 --policy nested=fullmm)
"$bin" "${A[@]}" >"$tmp/t" 2>"$tmp/e" || failmsg "compare exit $?"
"$bin" "${A[@]}" --json >"$tmp/j" || failmsg "compare --json exit $?"
python3 - "$tmp/t" "$tmp/j" <<'PY' || fail=1
import json, re, sys
table = open(sys.argv[1], encoding="utf-8").read().splitlines()
runs = json.load(open(sys.argv[2]))["runs"]
bad = 0
def no(msg):
    global bad
    print("readable: FAIL: " + msg)
    bad = 1
rows = {}
for line in table:
    m = re.match(r"^(\S+(?: \S+)?) {2,}(.*)$", line)
    if m:
        rows[m.group(1)] = re.split(r" {2,}", m.group(2).strip())
TIME = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}
CNT = {"K": 1e3, "M": 1e6, "G": 1e9}
def unit_for_time(ns):
    return "s" if ns >= 1e9 else "ms" if ns >= 1e6 else "µs" if ns >= 1e3 else "ns"
def check_time(name, cell, ns):
    m = re.fullmatch(r"([0-9.]+) (ns|µs|ms|s)", cell)
    if not m:
        return no("%s: %r is not a time" % (name, cell))
    if m.group(2) != unit_for_time(ns):
        no("%s: %r for %d ns: want unit %s" % (name, cell, ns, unit_for_time(ns)))
    v = float(m.group(1)) * TIME[m.group(2)]
    if abs(v - ns) > max(0.5, ns * 5e-4):
        no("%s: %r is not %d ns" % (name, cell, ns))
def check_count(name, cell, v):
    if v < 10000:
        if cell != "{:,}".format(v):
            no("%s: %r, want exact %s" % (name, cell, "{:,}".format(v)))
        return
    m = re.fullmatch(r"([0-9.]+) ([KMG])", cell)
    if not m:
        return no("%s: %r for %d: want K/M/G" % (name, cell, v))
    x = float(m.group(1)) * CNT[m.group(2)]
    if abs(x - v) > v * 5e-4:
        no("%s: %r is not %d" % (name, cell, v))
big = False
for c, run in enumerate(runs):
    m = run["metrics"]
    for name, key in (("wall", "wall_ns"), ("user", "user_ns"), ("sys", "sys_ns"),
                      ("lock_wait", "lock_wait_ns"), ("dvm_wait", "dvm_wait_ns")):
        check_time(name, rows[name][c], m[key])
    for name, key in (("ops", "ops"), ("ops_per_sec", "ops_per_sec"),
                      ("page_faults", "page_faults"), ("events", "events"),
                      ("tlb_misses", "tlb_misses")):
        check_count(name, rows[name][c], m[key])
    check_count("tlbi vae1is", rows["tlbi vae1is"][c], m["tlbi"]["vae1is"])
    big |= m["tlbi"]["vae1is"] >= 10000
    check_time("sys_per_op", rows["sys_per_op"][c], m["sys_ns"] // m["ops"])
    pct = 100.0 * m["idle_ns"] / (m["wall_ns"] * run["cpus"])
    want = "%.1f %%" % pct
    if rows["idle"][c] != want:
        no("idle column %d: %r, want %r (of %d CPUs x wall)" % (c + 1, rows["idle"][c], want, run["cpus"]))
if not big:
    no("no count of 10 000 or more in the run: the K/M/G case is not exercised")
sys.exit(bad)
PY

# a violation note names its column
"$bin" compare lazy_tables --seeds 1 --policy x86_lazy=freed_tables --policy x86_lazy=never \
	>"$tmp/t" 2>"$tmp/e" || failmsg "compare lazy_tables exit $?"
grep -q "note: column 2 (x86_lazy=never) saw [0-9]* invariant violation" "$tmp/e" ||
	failmsg "violation note does not name the column: $(cat "$tmp/e")"
grep -q "column 1" "$tmp/e" && failmsg "a note for the clean column 1"

# progress: nothing when stderr is not a terminal
"$bin" run mmap8 --iters 3000 --threads 4 >"$tmp/t" 2>"$tmp/e" || failmsg "run exit $?"
[ -s "$tmp/e" ] && failmsg "stderr not empty when it is not a terminal: $(head -c 200 "$tmp/e")"
# a bar with the simulated progress when it is one (run under a pty)
python3 - "$bin" <<'PY' || fail=1
import os, pty, subprocess, sys
def on_pty(args):
    m, s = pty.openpty()
    p = subprocess.Popen([sys.argv[1]] + args, stdout=subprocess.DEVNULL, stderr=s)
    os.close(s)
    out = b""
    while True:
        try:
            d = os.read(m, 4096)
        except OSError:
            break
        if not d:
            break
        out += d
    os.close(m)
    return p.wait(), out.decode("utf-8", "replace")
bad = 0
rc, err = on_pty(["run", "mmap8", "--iters", "3000", "--threads", "4"])
if rc != 0 or "% of the simulated run" not in err or "\r[" not in err or " left" not in err:
    print("readable: FAIL: run on a terminal: no progress bar (exit %d): %r" % (rc, err[:200])); bad = 1
pcts = [int(x.split("]")[1].split("%")[0]) for x in err.split("\r[")[1:] if "% of" in x]
if pcts != sorted(pcts) or len(set(pcts)) < 3:
    print("readable: FAIL: progress does not advance: %r" % pcts); bad = 1
if not err.endswith("\r"):
    print("readable: FAIL: the bar is not erased at the end: %r" % err[-80:]); bad = 1
rc, err = on_pty(["run", "mmap8", "--iters", "200", "--threads", "2", "--seeds", "3", "-j", "1"])
if rc != 0 or "runs" not in err:
    print("readable: FAIL: run --seeds 3 on a terminal: no runs progress: %r" % err[:200]); bad = 1
sys.exit(bad)
PY

if [ $fail = 0 ]; then
	echo "readable: PASS"
	exit 0
fi
exit 1
