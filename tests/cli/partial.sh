#!/usr/bin/env bash
# partial.sh TLBSIM - stopping a long run (docs/output.md "partial runs").
#  1. run --time-limit 1 on a run that would take hours: ends within a few
#     seconds, exit 0, the table says PARTIAL, stderr says it stopped early;
#     with --json, "partial":"time limit" and the metrics are consistent
#     (user + sys + idle = wall x cpus, wall > 0).
#  2. SIGINT during a run: exit 130, JSON with "partial":"SIGINT".
#  3. SIGTERM during a run: exit 143, table marked PARTIAL.
#  4. SIGINT during a long check: exit 130 and the summary is printed.
#  5. compare --time-limit 1: the column that was running is marked partial
#     and the columns never started are not printed.
#  6. --time-limit takes decimal seconds: 0.3 stops a run (partial) and a
#     check (its summary); the limit is 1 ms to one day, and 0, 0.0004,
#     86401, "1e3" or ".5" is refused with one line and exit 2 (run, check
#     and test alike).
#  7. a check whose schedules leave thousands of entities pending (IPI rounds
#     to 1024 CPUs) stops at --time-limit and at SIGINT: the limit used to be
#     looked at only on threads' steps, and entities ran between them for
#     minutes.
#  8. test -j 2 under SIGINT: both running files are interrupted, the files
#     not started never run, the summary is printed, exit 130.
#  9. (and 10.) a timed workload stopped inside its window measures the
#     window to the stop (window_ns < wall_ns);
#     --seeds N stopped after some seeds ran to the end: the mean is over
#     those whole seeds only (every seed's ops is the full count), the seed
#     that was cut is left out and the table and JSON say how many of N ran;
#     a compare cut down to one column has no ratio column (a column over
#     itself) and its --svg chart's title says PARTIAL; --csv rows are whole
#     runs: a column with whole seeds has its row (seeds = how many), a run
#     cut before any seed ended has none (the header alone).
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "partial: FAIL: $*"; fail=1; }
long=(run mmap8 --iters 1000000000)
start=$(date +%s)
"$bin" "${long[@]}" --time-limit 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || failmsg "time limit: exit $rc, want 0"
[ $(( $(date +%s) - start )) -le 20 ] || failmsg "time limit: took more than 20 s"
grep -q "^PARTIAL: the run stopped early (time limit)" "$tmp/out" || failmsg "time limit: no PARTIAL line"
grep -q "stopped early" "$tmp/err" || failmsg "time limit: no note on stderr"
"$bin" "${long[@]}" --time-limit 1 --json >"$tmp/out" 2>"$tmp/err"
python3 - "$tmp/out" "time limit" <<'PY' || failmsg "time limit: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["partial"] == sys.argv[2], d["partial"]
m = d["metrics"]
assert m["wall_ns"] > 0
assert m["user_ns"] + m["sys_ns"] + m["idle_ns"] == m["wall_ns"] * d["cpus"], m
PY
signal_run() {	# signal exit-code json|table args...
	local sig=$1 want=$2 fmt=$3
	shift 3
	local extra=()
	[ "$fmt" = json ] && extra=(--json)
	"$bin" "$@" "${extra[@]}" >"$tmp/out" 2>"$tmp/err" &
	local pid=$!
	sleep 1
	kill -s "$sig" "$pid"
	wait "$pid"
	local rc=$?
	[ "$rc" = "$want" ] || failmsg "$sig: exit $rc, want $want"
}
signal_run INT 130 json "${long[@]}"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['partial']=='SIGINT', d['partial']" \
	"$tmp/out" || failmsg "SIGINT: JSON not marked partial"
signal_run TERM 143 table "${long[@]}"
grep -q "^PARTIAL: the run stopped early (SIGTERM)" "$tmp/out" || failmsg "SIGTERM: no PARTIAL line"
signal_run INT 130 table check mmap5 --policy nested=fullmm --runs 100000000 --time-limit 600
grep -q "^no violation: [0-9]* schedules" "$tmp/out" || failmsg "check SIGINT: no summary"
grep -q "interrupted" "$tmp/out" || failmsg "check SIGINT: the summary does not say it was interrupted"
"$bin" compare mmap8 --iters 1000000000 --seeds 1 --policy nested=v2 --policy nested=fullmm \
	--policy nested=prefix --time-limit 1 --json >"$tmp/out" 2>"$tmp/err"
python3 - "$tmp/out" <<'PY' || failmsg "compare time limit: JSON"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 1, len(runs)
assert runs[0]["partial"] == "time limit"
PY
start=$(date +%s)
"$bin" "${long[@]}" --time-limit 0.3 --json >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || failmsg "time limit 0.3: exit $rc, want 0"
[ $(( $(date +%s) - start )) -le 20 ] || failmsg "time limit 0.3: took more than 20 s"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['partial']=='time limit', d['partial']" \
	"$tmp/out" || failmsg "time limit 0.3: JSON not marked partial"
"$bin" check mmap5 --policy nested=fullmm --runs 100000000 --time-limit 0.3 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || failmsg "check --time-limit 0.3: exit $rc, want 0"
grep -q "^no violation: [0-9]* schedules" "$tmp/out" || failmsg "check --time-limit 0.3: no summary"
for bad in 0 0.0004 86401 1e3 .5 2. -1; do
	for cmd in run check test; do
		case $cmd in
		run) args=(run mmap8 --time-limit "$bad") ;;
		check) args=(check mmap5 --time-limit "$bad") ;;
		test) args=(test --time-limit "$bad" /nonexistent) ;;	# paths are read as parsed
		esac
		"$bin" "${args[@]}" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		[ "$rc" = 2 ] || failmsg "$cmd --time-limit $bad: exit $rc, want 2"
		[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "--time-limit $bad: want host seconds" "$tmp/err" ||
			failmsg "$cmd --time-limit $bad: stderr is not the one-line error: $(head -c 200 "$tmp/err")"
	done
done
wide=(check tlb_flush2 --profile x86-256 --cpus 1024 -w mode=threads --strategy pct --seed 7
	--runs 100000 -D dirty_account_ns=100 --policy x86_invlpg_miss=ignore)
start=$(date +%s)
timeout -s KILL 60 "$bin" "${wide[@]}" --time-limit 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || failmsg "wide check --time-limit 1: exit $rc, want 0"
[ $(( $(date +%s) - start )) -le 20 ] || failmsg "wide check --time-limit 1: took more than 20 s"
grep -q "time-limit) ended the search" "$tmp/out" || failmsg "wide check: the summary does not say the limit ended it"
start=$(date +%s)
signal_run INT 130 table "${wide[@]}" --time-limit 600
[ $(( $(date +%s) - start )) -le 20 ] || failmsg "wide check SIGINT: took more than 20 s"
# test -j 2: SIGINT stops both running checks (their lines say interrupted)
# and starts no more files; the summary is printed, exit 130, within seconds
mkdir -p "$tmp/scen"
scen=$(dirname "$0")/../../scenarios
for i in 1 2 3 4; do cp "$scen/mmap8.tlbs" "$tmp/scen/s$i.tlbs"; done
start=$(date +%s)
signal_run INT 130 table test "$tmp/scen" -j 2 --time-limit 600
[ $(( $(date +%s) - start )) -le 20 ] || failmsg "test -j 2 SIGINT: took more than 20 s"
[ "$(grep -c ': interrupted$' "$tmp/out")" = 2 ] || failmsg "test -j 2 SIGINT: want 2 interrupted lines: $(cat "$tmp/out")"
tail -1 "$tmp/out" | grep -q "^0 passed, 2 failed$" || failmsg "test -j 2 SIGINT: summary: $(tail -1 "$tmp/out")"
# 9. many short seeds on one worker, a limit that ends them part-way
seeds=(--iters 200 --seeds 1000 -j 1 --time-limit 1)
"$bin" run mmap8 "${seeds[@]}" --json >"$tmp/out" 2>"$tmp/err"
python3 - "$tmp/out" <<'PY' || failmsg "seeds cut by the limit: JSON: $(head -c 300 "$tmp/err")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["partial"] == "time limit", d["partial"]
ps = d["partial_seeds"]
assert ps["planned"] == 1000 and 1 <= ps["whole"] < 1000, ps
n = d.get("seeds", 1)
assert n == ps["whole"], (n, ps)
ops = d["stats"]["ops"]["values"] if n > 1 else [d["metrics"]["ops"]]
assert len(ops) == n and all(v == 16 * 200 for v in ops), ops
PY
"$bin" run mmap8 "${seeds[@]}" >"$tmp/out" 2>"$tmp/err"
grep -q "^PARTIAL: the run stopped early (time limit): [0-9]* of 1000 seeds ran to the end" "$tmp/out" ||
	failmsg "seeds cut by the limit: table: $(grep PARTIAL "$tmp/out")"
"$bin" compare mmap8 "${seeds[@]}" --policy nested=v2 --policy nested=fullmm --svg "$tmp/c.svg" \
	>"$tmp/out" 2>"$tmp/err"
grep -q "^PARTIAL: column 1 stopped early (time limit): [0-9]* of 1000 seeds" "$tmp/out" ||
	failmsg "compare cut to one column: $(grep PARTIAL "$tmp/out")"
grep -q "^metric .*ratio" "$tmp/out" && failmsg "compare cut to one column: a ratio column"
grep -q ">PARTIAL (stopped early: time limit) mmap8" "$tmp/c.svg" ||
	failmsg "compare cut to one column: the chart's title does not say PARTIAL"
"$bin" run mmap8 "${seeds[@]}" --csv >"$tmp/out" 2>"$tmp/err"
python3 - "$tmp/out" <<'PY' || failmsg "seeds cut by the limit: CSV: $(head -c 300 "$tmp/out")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1, rows
r = rows[0]
n = int(r["seeds"])
assert 1 <= n < 1000, n
ops = float(r["ops_mean"] if n > 1 else r["ops"])
assert ops == 16 * 200, ops
PY
"$bin" "${long[@]}" --time-limit 0.3 --csv >"$tmp/out" 2>"$tmp/err"
[ "$(wc -l <"$tmp/out")" = 1 ] && head -1 "$tmp/out" | grep -q "^workload,profile," ||
	failmsg "a run cut short: --csv printed a row of it: $(head -c 300 "$tmp/out")"
# a timed workload stopped inside its measured window: window_ns runs from
# the window's start to the stop, not over the whole run (the warm-up was
# counted in the window and in ops_per_sec)
"$bin" run page_fault1 -w size=64M --cpus 2 --iters 100000000 --time-limit 1.5 --json \
	>"$tmp/pw.json" 2>"$tmp/err"
python3 - "$tmp/pw.json" <<'PY' || failmsg "a timed run stopped in its window: window_ns not below wall_ns"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["metrics"]
ok = d.get("partial") == "time limit" and 0 < m["window_ns"] < m["wall_ns"] and \
    m["ops_per_sec"] <= m["ops"] * 1e9 / m["window_ns"]
sys.exit(0 if ok else 1)
PY
if [ $fail = 0 ]; then
	echo "partial: PASS"
	exit 0
fi
exit 1
