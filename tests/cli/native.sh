#!/usr/bin/env bash
# native.sh TLBSIM {calibrate|run|errors|signals} - the host side (docs/native.md).
# These run on the machine under test, so they check structure and sanity,
# never values:
#   calibrate: `calibrate -o FILE` writes a profile that --profile loads and
#     runs; every value is a non-negative integer, every measured one
#     positive; the JSON figures are positive and finite, each with a method.
#   run: `native mmap8 --threads 2 --iters 1000 --json` has run's keys,
#     "mode": "native", ops = threads x iters, ops_per_sec > 0, wall >= 0,
#     ipi_per_op >= 0 or null; page_fault3 (threads and processes) runs;
#     compare --native prints a model and a native column.
#   errors: bad input is one line on stderr, exit 2, nothing on stdout, and
#     no file left behind; a page_fault3 task file the host cannot fill
#     (RLIMIT_FSIZE) is exit 3 and one line, in threads and processes mode.
#   signals: SIGINT during calibrate ends it within seconds, exit 130, no
#     profile and no temporary file written; SIGINT during native mmap8 and
#     SIGTERM during native page_fault3 (processes) end the run within
#     seconds, exit 130/143, the output marked partial, no task left
#     running; SIGKILL of the parent takes its task processes along. (Both
#     used to be unhandled: calibrate and native ignored a signal that the
#     shell had set to be ignored, and otherwise died of it, leaving the
#     temporary profile file and page_fault3's task processes behind.)
set -u
bin=$1
mode=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "native: FAIL: $*"; fail=1; }

case $mode in
calibrate)
	"$bin" calibrate -o "$tmp/host.prof" --budget 3000 --json >"$tmp/cal.json" 2>"$tmp/cal.err" ||
		failmsg "calibrate exited $?: $(cat "$tmp/cal.err")"
	[ -s "$tmp/host.prof" ] || failmsg "no profile written"
	ls "$tmp" | grep -q '\.tmp\.' && failmsg "a temporary file was left behind"
	grep -q "profile: $tmp/host.prof" "$tmp/cal.err" || failmsg "stderr does not name the file"
	"$bin" list profiles --dump "$tmp/host.prof" >"$tmp/dump" 2>"$tmp/e" ||
		failmsg "the file does not load: $(cat "$tmp/e")"
	"$bin" run mmap8 --threads 2 --iters 5 --profile "$tmp/host.prof" --json >"$tmp/run.json" \
		2>"$tmp/e" || failmsg "run --profile FILE: $(cat "$tmp/e")"
	python3 - "$tmp/host.prof" "$tmp/cal.json" "$tmp/run.json" "$(uname -m)" "$(nproc)" <<'PY' || fail=1
import json, math, re, sys
prof, cal, run, arch, ncpu = sys.argv[1:]
bad = []
keys = {}
measured = set()
for line in open(prof):
    if line.startswith("#") or not line.strip():
        continue
    k, v = line.split("=", 1)
    k = k.strip()
    val = v.split("#", 1)[0].strip() if k != "description" else v.strip()
    keys[k] = val
    if "measured on this host" in line:
        measured.add(k)
for k in ("name", "description", "arch", "page_size", "cpus"):
    if k not in keys:
        bad.append("missing " + k)
if keys.get("arch") != ("x86-64" if arch == "x86_64" else "arm64"):
    bad.append("arch %r on a %s host" % (keys.get("arch"), arch))
if keys.get("cpus") != ncpu:
    bad.append("cpus %r, nproc %s" % (keys.get("cpus"), ncpu))
params = {k: v for k, v in keys.items()
          if k not in ("name", "description", "arch", "page_size", "cpus")}
if len(params) < 40:
    bad.append("only %d parameters" % len(params))
for k, v in params.items():
    if not re.fullmatch(r"[0-9]+", v):
        bad.append("%s = %r is not a non-negative integer" % (k, v))
    elif k in measured and int(v) <= 0 and k not in ("kpti", "pcid", "ipi_latency_ns",
                                                      "idle_exit_ns"):
        bad.append("measured %s = %s is not positive" % (k, v))
for k in ("syscall_ns", "zero_4k_ns", "fault_ns"):
    if k not in measured:
        bad.append("%s was not measured" % k)
d = json.load(open(cal))
figs = {f["name"]: f for f in d["figures"]}
for want in ("syscall", "fault_read", "fault_write", "zero_page", "mmap_private",
             "munmap_private", "mmap_shared", "munmap_shared", "mprotect_present",
             "mprotect_absent"):
    if want not in figs:
        bad.append("figure %s missing" % want)
for f in d["figures"]:
    for k in ("median_ns", "min_ns"):
        x = f[k]
        if not (isinstance(x, (int, float)) and math.isfinite(x) and x > 0):
            bad.append("%s.%s = %r" % (f["name"], k, x))
    if f["min_ns"] > f["median_ns"]:
        bad.append("%s: min above median" % f["name"])
    if len(f["method"]) < 20:
        bad.append("%s: no method" % f["name"])
for p in d["params"]:
    if keys.get(p["name"]) != str(p["value"]):
        bad.append("%s: JSON %s, file %s" % (p["name"], p["value"], keys.get(p["name"])))
r = json.load(open(run))
if r["profile"] != keys.get("name") or r["metrics"]["ops"] != 10:
    bad.append("run --profile FILE: profile %r, ops %r" % (r["profile"], r["metrics"]["ops"]))
for b in bad:
    print("native: FAIL: " + b)
sys.exit(1 if bad else 0)
PY
	;;
run)
	"$bin" native mmap8 --threads 2 --iters 1000 --json >"$tmp/n.json" 2>"$tmp/e" ||
		failmsg "native mmap8 exited $?: $(cat "$tmp/e")"
	"$bin" run mmap8 --threads 2 --iters 2 --json >"$tmp/r.json" || failmsg "run mmap8"
	"$bin" native page_fault3 --threads 2 --iters 1 -w size=1M -w fs=tmpfs -w mode=threads \
		--json >"$tmp/p1.json" 2>"$tmp/e" || failmsg "native page_fault3 threads: $(cat "$tmp/e")"
	"$bin" native page_fault3 --tasks 2 --iters 1 -w size=1M --json >"$tmp/p2.json" \
		2>"$tmp/e" || failmsg "native page_fault3 processes: $(cat "$tmp/e")"
	# the window holds --iters rounds of every task begun after it opened:
	# at least tasks x iters x pages written (it closed around the rounds
	# tasks had done before the last one warmed up: 3 pages of 8)
	for k in 1 2 3; do
		"$bin" native page_fault3 --tasks 8 --iters 1 -w size=4K --json 2>"$tmp/e" |
			python3 -c 'import json,sys; w=json.load(sys.stdin)["native"]["window_ops"]; sys.exit(0 if w >= 8 else 1)' ||
			failmsg "page_fault3 --tasks 8 --iters 1: window_ops below 8 $(cat "$tmp/e")"
	done
	"$bin" compare --native mmap8 --threads 2 --iters 100 >"$tmp/c.txt" 2>"$tmp/e" ||
		failmsg "compare --native: $(cat "$tmp/e")"
	"$bin" compare --native mmap8 --threads 2 --iters 100 --policy nested=v2 --json \
		>"$tmp/c.json" 2>"$tmp/e" || failmsg "compare --native --json: $(cat "$tmp/e")"
	"$bin" native mmap8 --threads 2 --iters 50 >"$tmp/n.txt" || failmsg "native table"
	python3 - "$tmp" <<'PY' || fail=1
import json, math, os, sys
t = sys.argv[1]
bad = []
n = json.load(open(os.path.join(t, "n.json")))
r = json.load(open(os.path.join(t, "r.json")))
if n.get("mode") != "native":
    bad.append("mode %r" % n.get("mode"))
for k in r:
    if k not in n:
        bad.append("run's key %s missing" % k)
for k, v in n["metrics"].items():
    if k not in r["metrics"]:
        bad.append("metric %s is not one of run's (native-only go under \"native\")" % k)
    if v is not None and not (isinstance(v, int) and v >= 0):
        bad.append("metric %s = %r" % (k, v))
m = n["metrics"]
if m["ops"] != 2000:
    bad.append("ops %r, want 2000" % m["ops"])
if not m["ops_per_sec"] > 0:
    bad.append("ops_per_sec %r" % m["ops_per_sec"])
if not m["wall_ns"] >= 0 or m["wall_ns"] < m["window_ns"]:
    bad.append("wall_ns %r window_ns %r" % (m["wall_ns"], m["window_ns"]))
nat = n["native"]
ipo = nat["ipi_per_op"]
if ipo is not None and not (isinstance(ipo, (int, float)) and math.isfinite(ipo) and ipo >= 0):
    bad.append("ipi_per_op %r" % ipo)
if (ipo is None) != (m["ipi_received"] is None):
    bad.append("ipi_per_op and ipi_received disagree on availability")
for k in ("real_s", "user_s", "sys_s"):
    if not (isinstance(nat[k], (int, float)) and nat[k] >= 0):
        bad.append("%s %r" % (k, nat[k]))
if abs(nat["real_s"] * 1e9 - m["wall_ns"]) > 2000:
    bad.append("real_s %r and wall_ns %r disagree" % (nat["real_s"], m["wall_ns"]))
if n["threads"] != 2 or n["iters"] != 1000 or n["params"].get("map") != "shared":
    bad.append("configuration %r %r %r" % (n["threads"], n["iters"], n["params"]))
for f in ("p1.json", "p2.json"):
    p = json.load(open(os.path.join(t, f)))
    pm = p["metrics"]
    if pm["ops"] < 2 * 2 * 256 or pm["ops_per_sec"] <= 0 or pm["window_ns"] <= 0:
        bad.append("%s: ops %r ops_per_sec %r window %r" % (f, pm["ops"], pm["ops_per_sec"],
                                                             pm["window_ns"]))
c = json.load(open(os.path.join(t, "c.json")))
if len(c["runs"]) != 2 or c["runs"][0].get("mode") == "native" or \
        c["runs"][1].get("mode") != "native" or c["runs"][0]["policy"]["nested"] != "v2":
    bad.append("compare --native --json: want [model nested=v2, native]")
txt = open(os.path.join(t, "c.txt")).read()
head = [l for l in txt.splitlines() if l.startswith("metric")]
if not head or head[0].split() != ["metric", "model", "native", "ratio"]:
    bad.append("compare --native table header %r" % head)
if "ops_per_sec" not in txt or "ipi_per_op" not in txt:
    bad.append("compare --native table rows")
nt = open(os.path.join(t, "n.txt")).read()
if not nt.startswith("native mmap8 (size=16M touch=1 map=shared uws=8) on this host"):
    bad.append("native table header %r" % nt.splitlines()[0])
for b in bad:
    print("native: FAIL: " + b)
sys.exit(1 if bad else 0)
PY
	;;
signals)
	sig_run() {	# signal delay want-exit outfile args...
		local sig=$1 delay=$2 want=$3 out=$4
		shift 4
		local start
		start=$(date +%s)
		(cd "$tmp" && exec "$bin" "$@") >"$out" 2>"$tmp/e" &
		local pid=$!
		sleep "$delay"
		kill -s "$sig" "$pid"
		wait "$pid"
		local rc=$?
		[ "$rc" = "$want" ] || failmsg "$sig to $*: exit $rc, want $want: $(head -c 300 "$tmp/e")"
		[ $(( $(date +%s) - start )) -le 20 ] || failmsg "$sig to $*: took more than 20 s"
	}
	sig_run INT 1 130 "$tmp/o" calibrate -o "$tmp/h.prof" --budget 60000
	[ -e "$tmp/h.prof" ] && failmsg "calibrate stopped: wrote the profile"
	ls "$tmp" | grep -q '\.tmp\.' && failmsg "calibrate stopped: left a temporary file"
	grep -q "stopped (SIGINT)" "$tmp/e" || failmsg "calibrate stopped: stderr $(cat "$tmp/e")"
	sig_run INT 1 130 "$tmp/n.txt" native mmap8 --threads 2 --iters 987654321
	grep -q "^PARTIAL: the native run stopped early (SIGINT)" "$tmp/n.txt" ||
		failmsg "native mmap8 stopped: no PARTIAL line: $(head -3 "$tmp/n.txt")"
	sig_run TERM 1 143 "$tmp/p.json" native page_fault3 --tasks 2 -w mode=processes \
		-w size=1M --iters 987654322 --json
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['partial']=='SIGTERM' and d['metrics']['ops'] > 0, d" \
		"$tmp/p.json" || failmsg "native page_fault3 stopped: JSON"
	(cd "$tmp" && exec "$bin" native page_fault3 --tasks 2 -w mode=processes -w size=1M \
		--iters 987654323) >/dev/null 2>&1 &
	pid=$!
	sleep 1
	kill -KILL $pid
	wait $pid 2>/dev/null
	sleep 1
	for it in 987654321 987654322 987654323; do
		pgrep -f -- "--iters $it" >/dev/null && {
			failmsg "tasks of the run with --iters $it still run"
			pkill -KILL -f -- "--iters $it"
		}
	done
	;;
errors)
	err() {	# expected stderr pattern, then the arguments
		local pat=$1
		shift
		(cd "$tmp" && "$bin" "$@") >"$tmp/o" 2>"$tmp/e"
		local rc=$?
		[ $rc = 2 ] || failmsg "$*: exit $rc, want 2"
		[ -s "$tmp/o" ] && failmsg "$*: wrote to stdout"
		[ "$(wc -l <"$tmp/e")" = 1 ] || failmsg "$*: stderr is not one line: $(cat "$tmp/e")"
		grep -q -- "$pat" "$tmp/e" || failmsg "$*: stderr lacks '$pat': $(cat "$tmp/e")"
	}
	err "no native shape" native mmap5
	err "no native shape" compare --native page_fault1
	err "unknown workload" native bogus
	err "size=0" native mmap8 -w size=0
	err "touch=99999" native mmap8 -w touch=99999
	err "map=weird" native mmap8 -w map=weird
	err "mode=both" native page_fault3 -w mode=both
	err "fs=xfs" native page_fault3 -w fs=xfs
	err "does not apply" native mmap8 --policy nested=v2
	err "--cpus 4096" native mmap8 --cpus 4096
	err "--threads 0" native mmap8 --threads 0
	err "missing WORKLOAD" native
	err "unexpected argument" calibrate bogus
	err "--budget 5" calibrate --budget 5
	err "--name x86-24" calibrate --name x86-24
	err "needs a value" calibrate -o
	err "no/such/dir" calibrate -o no/such/dir/h.prof
	# a host failure (here a TMPDIR that does not exist) is exit 3, one
	# line naming the directory and where it came from
	(cd "$tmp" && TMPDIR="$tmp/none" "$bin" native page_fault3 --threads 1 --iters 1 \
		-w size=64K) >"$tmp/o" 2>"$tmp/e"
	rc=$?
	[ $rc = 3 ] || failmsg "native with TMPDIR=$tmp/none: exit $rc, want 3"
	[ -s "$tmp/o" ] && failmsg "native with a bad TMPDIR wrote to stdout"
	[ "$(wc -l <"$tmp/e")" = 1 ] || failmsg "bad TMPDIR: stderr is not one line: $(cat "$tmp/e")"
	grep -q -- "$tmp/none (TMPDIR)" "$tmp/e" || failmsg "bad TMPDIR: stderr lacks the directory: $(cat "$tmp/e")"
	[ -z "$(ls "$tmp" | grep -v '^[oe]$')" ] || failmsg "files left behind: $(ls "$tmp")"
	# a task file the host cannot fill (RLIMIT_FSIZE here; a full tmpfs
	# alike) is a host failure, exit 3 and one line, in both modes: threads
	# died of SIGXFSZ (or SIGBUS) with no message, processes printed ops 0
	# and exit 0
	for m in threads processes; do
		(cd "$tmp" && ulimit -f 1024 && TMPDIR="$tmp" "$bin" native page_fault3 \
			--threads 1 --iters 1 -w size=16M -w mode=$m) >"$tmp/o" 2>"$tmp/e"
		rc=$?
		[ $rc = 3 ] && [ ! -s "$tmp/o" ] && [ "$(wc -l <"$tmp/e")" = 1 ] &&
			grep -q "file of 16777216 bytes in $tmp (TMPDIR): File too large" "$tmp/e" ||
			failmsg "page_fault3 mode=$m over RLIMIT_FSIZE: exit $rc, $(head -c 300 "$tmp/e")"
	done
	;;
*)
	failmsg "unknown mode $mode"
	;;
esac
[ $fail = 0 ] && echo "native: PASS"
exit $fail
