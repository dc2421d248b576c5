#!/usr/bin/env bash
# run_trace.sh TLBSIM DIR - `tlbsim run --trace` (docs/output.md "Run timeline"):
#   * the Chrome JSON passes run_trace_check.py (slices nest per (pid, tid)
#     track, every timestamp in the window, flows pair up) and has CPU and
#     thread tracks, idle and lock-wait slices, syscall and fault phases,
#     IPI (x86) and TLBI (arm64) arrows and a counter track;
#   * the checker fails on a file with a partial overlap and one outside the
#     window (it can fail);
#   * the same command twice writes byte-identical files;
#   * tracing does not change the run's metrics (events included: the window
#     opening mid-run is not an event of the model);
#   * --trace-format ftrace: one line per record (as many as the JSON's
#     records), each "TASK-TID [CPU] .... SECONDS: event: fields" with its time
#     in the window, kernel tracepoint names (sched_switch, sys_enter,
#     tlb_flush, ipi_send_cpumask, mm_page_free_batched, mmap_lock_*), and
#     sched_switch with the kernel's fields (prev_comm ... ==> next_comm ...);
#   * the default window is 0:10ms; "START:" runs to the end;
#   * the last event (arm64: the RCU callback freeing page tables) is at
#     wall_ns.
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "run_trace: FAIL: $*"; fail=1; }
chk() { python3 "$dir/run_trace_check.py" "$@"; }
X=(mmap8 --iters 40 --threads 4 --profile x86-24)
A=(mmap8 --iters 40 --threads 4 --profile falkor-46)

# x86: IPI arrows
"$bin" run "${X[@]}" --json --trace "$tmp/x.json" --trace-window 20us:2ms >"$tmp/x.out" 2>"$tmp/x.err" ||
	failmsg "run --trace exit $?"
grep -q "trace: $tmp/x.json" "$tmp/x.err" || failmsg "no 'trace: FILE' note on stderr"
out=$(chk "$tmp/x.json" 20000 2000000 --summary) || failmsg "x86 timeline: $out"
for want in "1:idle" "1:syscall" "2:lock wait" "2:munmap" "2:mmap" "2:page fault" "2:user" \
	"flow:ipi" "C:mmap_lock waiters"; do
	grep -qF " $want " <<<"$out " || failmsg "x86 timeline has no '$want': $out"
done
# (the same command line: it is in the file)
mkdir -p "$tmp/d1" "$tmp/d2"
for d in d1 d2; do
	(cd "$tmp/$d" && "$bin" run "${X[@]}" --trace t.json --trace-window 20us:2ms >/dev/null 2>&1 &&
		"$bin" run "${X[@]}" --trace t.txt --trace-format ftrace --trace-window 20us:2ms \
			>/dev/null 2>&1) || failmsg "run --trace in $d exit $?"
done
cmp -s "$tmp/d1/t.json" "$tmp/d2/t.json" || failmsg "the same run gave two different timelines"
cmp -s "$tmp/d1/t.txt" "$tmp/d2/t.txt" || failmsg "the same run gave two different ftrace files"
# tracing leaves the metrics as they are (the window opens mid-run here)
"$bin" run "${X[@]}" --json >"$tmp/plain.out"
python3 - "$tmp/plain.out" "$tmp/x.out" <<'PY' || failmsg "tracing changed the metrics"
import json, sys
a, b = (json.load(open(p))["metrics"] for p in sys.argv[1:])
sys.exit(0 if a == b else 1)
PY

# arm64: broadcast-TLBI arrows; the window to the end
"$bin" run "${A[@]}" --trace "$tmp/a.json" --trace-window 1ms: >/dev/null 2>&1 || failmsg "arm64 exit $?"
out=$(chk "$tmp/a.json" 1000000 - --summary) || failmsg "arm64 timeline: $out"
grep -qF " flow:tlbi " <<<"$out " || failmsg "arm64 timeline has no TLBI arrow: $out"

# the checker can fail: a slice moved to overlap its neighbour partially,
# and a timestamp outside the window
python3 - "$tmp/x.json" "$tmp/bad1.json" "$tmp/bad2.json" <<'PY'
import json, sys
from decimal import Decimal
d = json.load(open(sys.argv[1]), parse_float=Decimal)
ev = d["traceEvents"]
xs = [e for e in ev if e.get("ph") == "X" and e["pid"] == 2 and e["dur"] > 0]
# two consecutive slices of a thread: stretch the first over half the second
by = {}
for e in xs:
    by.setdefault(e["tid"], []).append(e)
for sl in by.values():
    sl.sort(key=lambda e: (e["ts"], -e["dur"]))
    for p, q in zip(sl, sl[1:]):
        if p["ts"] + p["dur"] == q["ts"] and q["dur"] > Decimal("0.002") and p["dur"] < q["dur"]:
            p["dur"] += q["dur"] / 2
            break
    else:
        continue
    break
json.dump(d, open(sys.argv[2], "w"), default=float)
d = json.load(open(sys.argv[1]), parse_float=Decimal)
d["traceEvents"][-1]["ts"] = Decimal("1.000")
json.dump(d, open(sys.argv[3], "w"), default=float)
PY
chk "$tmp/bad1.json" 20000 2000000 >/dev/null && failmsg "the checker passed a partial overlap"
chk "$tmp/bad2.json" 20000 2000000 >/dev/null && failmsg "the checker passed a time outside the window"

# ftrace text: the same records as the JSON
"$bin" run "${X[@]}" --trace "$tmp/x.txt" --trace-format ftrace --trace-window 20us:2ms >/dev/null 2>&1 ||
	failmsg "ftrace exit $?"
python3 - "$tmp/x.txt" "$tmp/x.json" <<'PY' || fail=1
import json, re, sys
lines = open(sys.argv[1]).read().split("\n")
rec = json.load(open(sys.argv[2]))["otherData"]["records"]
bad = 0
def failm(m):
    global bad
    print("run_trace: FAIL: ftrace: " + m); bad = 1
hdr = [l for l in lines if l.startswith("#")]
body = [l for l in lines if l and not l.startswith("#")]
m = re.search(r"entries-in-buffer/entries-written: (\d+)/(\d+)\s+#P:24", "\n".join(hdr))
if not m or int(m.group(1)) != len(body):
    failm("the header does not give the %d lines' count" % len(body))
if len(body) != rec:
    failm("%d lines for %d records" % (len(body), rec))
pat = re.compile(r"^ *(\S+)-(\d+) +\[(\d{3})\] \.\.\.\. +(\d+)\.(\d{9}): ([A-Za-z0-9_]+):( .*)?$")
events = set()
for l in body:
    m = pat.match(l)
    if not m:
        failm("malformed line: %r" % l); break
    t = int(m.group(4)) * 10**9 + int(m.group(5))
    if not (20000 <= t < 2000000) or int(m.group(3)) >= 24:
        failm("time or CPU out of range: %r" % l); break
    events.add(m.group(6))
sw = [l for l in body if ": sched_switch: " in l]
kern = re.compile(r": sched_switch: prev_comm=mmap8 prev_pid=(\d+) prev_prio=120 prev_state=(S|R\+) "
                  r"==> next_comm=(mmap8|swapper/\d+) next_pid=(\d+) next_prio=120$")
if not sw or not any(kern.search(l) for l in sw):
    failm("no sched_switch line in the kernel's format: %r" % sw[:2])
for l in sw:
    m = kern.search(l)
    if m and m.group(3).startswith("swapper/") and m.group(4) != "0":
        failm("a switch to swapper (idle) with next_pid != 0: %r" % l)
for e in ("sched_switch", "sys_enter", "tlb_flush", "ipi_send_cpumask", "mm_page_free_batched",
          "mmap_lock_start_locking", "mmap_lock_released", "page_fault_user", "cpu_idle"):
    if e not in events:
        failm("no %s event (have %s)" % (e, sorted(events)))
sys.exit(bad)
PY

# the default window: the first 10 ms
"$bin" run mmap8 --iters 200 --threads 4 --profile x86-24 --json --trace "$tmp/d.json" \
	>"$tmp/d.out" 2>/dev/null || failmsg "default window exit $?"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["metrics"]["wall_ns"] <= 10**7)' \
	"$tmp/d.out" || failmsg "the default-window run is not longer than 10 ms: the test proves nothing"
chk "$tmp/d.json" 0 10000000 >/dev/null || failmsg "default window: $(chk "$tmp/d.json" 0 10000000)"

# the run's last event is in the timeline: on arm64 it is the RCU callback
# that frees the last page tables a grace period after the last munmap, and
# the trace ended 3 ms before wall_ns
"$bin" run mmap8 --iters 2 --threads 2 --profile falkor-46 -D jitter=0 --json \
	--trace "$tmp/r.txt" --trace-format ftrace >"$tmp/r.out" 2>/dev/null || failmsg "rcu run exit $?"
python3 - "$tmp/r.out" "$tmp/r.txt" <<'PY' || failmsg "the trace does not reach wall_ns"
import json, re, sys
wall = json.load(open(sys.argv[1]))["metrics"]["wall_ns"]
lines = [l for l in open(sys.argv[2]).read().splitlines() if re.search(r" \d+\.\d+: ", l)]
last = max(round(float(re.search(r" (\d+\.\d+): ", l).group(1)) * 1e9) for l in lines)
if abs(last - wall) > 1 or "tlbsim_rcu_free_tables" not in lines[-1]:
    print("run_trace: FAIL: last event at %d ns (%s), wall_ns %d" % (last, lines[-1].strip(), wall))
    sys.exit(1)
PY

[ $fail = 0 ] && echo "run_trace: PASS"
exit $fail
