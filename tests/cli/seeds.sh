#!/usr/bin/env bash
# seeds.sh TLBSIM - --seeds N, --jobs J and the jitter parameter (run mode):
#   * --seeds prints "mean ± interval" per metric and "seeds S..S+N-1";
#   * the JSON "metrics" are the rounded means of the per-seed runs, which
#     equal the single runs with --seed S+k; "stats" has n values each;
#   * output is the same for every --jobs (host threads) and on a rerun;
#   * -D jitter=0 is the exact mode: every seed gives the same numbers (a
#     zero interval), and jitter > 0 makes seeds differ;
#   * compare's ratio is per seed and paired;
#   * compare runs 5 seeds unless --seeds is given; run runs one;
#   * metrics.violations is the total over the seeds, and
#     --fail-on-violation fails when any seed saw one.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "seeds: FAIL: $*"; fail=1; }
W=(mmap8 --iters 30 --threads 3 --profile x86-24)

"$bin" run "${W[@]}" --seeds 4 >"$tmp/t" 2>&1 || failmsg "run --seeds 4 exit $?"
grep -q "seeds 1\.\.4$" "$tmp/t" || failmsg "header does not say seeds 1..4"
grep -qE "^wall +[0-9.]+ (ns|µs|ms|s) ± [0-9.]+ (ns|µs|ms|s)$" "$tmp/t" || failmsg "no 'wall X ms ± Y µs' row"
grep -qE "^ops +90 ± 0$" "$tmp/t" || failmsg "ops is not '90 ± 0'"

# the means are the per-seed runs' means
"$bin" run "${W[@]}" --seeds 4 --seed 7 --json >"$tmp/j" || failmsg "json exit $?"
for k in 0 1 2 3; do
	"$bin" run "${W[@]}" --seed $((7 + k)) --json >"$tmp/s$k" || failmsg "seed run exit $?"
done
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
j = json.load(open(d + "/j"))
single = [json.load(open("%s/s%d" % (d, k)))["metrics"] for k in range(4)]
bad = 0
if j.get("seeds") != 4 or j.get("seed") != 7:
    print("seeds: FAIL: seeds/seed keys: %r %r" % (j.get("seeds"), j.get("seed"))); bad = 1
for key in ("wall_ns", "sys_ns", "events", "lock_wait_ns"):
    vals = [m[key] for m in single]
    st = j["stats"][key]
    if st["values"] != vals:
        print("seeds: FAIL: %s values %r, single runs %r" % (key, st["values"], vals)); bad = 1
    mean = sum(vals) / 4
    if abs(st["mean"] - mean) > 0.001 or j["metrics"][key] != int(mean + 0.5):
        print("seeds: FAIL: %s mean %r / %r, want %r" % (key, st["mean"], j["metrics"][key], mean)); bad = 1
if len(set(m["wall_ns"] for m in single)) < 2:
    print("seeds: FAIL: jitter made no difference between seeds"); bad = 1
sys.exit(bad)
PY

# the same for any --jobs, and on a rerun
"$bin" compare "${W[@]}" --seeds 3 -j 1 --policy nested=v2 --policy nested=fullmm >"$tmp/c1" || failmsg "compare -j 1"
"$bin" compare "${W[@]}" --seeds 3 -j 2 --policy nested=v2 --policy nested=fullmm >"$tmp/c2" || failmsg "compare -j 2"
"$bin" compare "${W[@]}" --seeds 3 --jobs 3 --policy nested=v2 --policy nested=fullmm >"$tmp/c3" || failmsg "compare -j 3"
# (the first line holds the host seconds the command took)
for f in c1 c2 c3; do
	head -n 1 "$tmp/$f" | grep -qE '^# simulated times .*; host [0-9.]+ s$' ||
		failmsg "compare $f: first line is not the simulated-times note"
	sed 1d "$tmp/$f" >"$tmp/$f.body"
done
cmp -s "$tmp/c1.body" "$tmp/c2.body" || failmsg "compare -j 1 and -j 2 differ"
cmp -s "$tmp/c1.body" "$tmp/c3.body" || failmsg "compare -j 1 and -j 3 differ"
grep -qE "^wall .* ± .* ± .* ± " "$tmp/c1" || failmsg "compare row has no ratio interval"
grep -q "per seed, paired" "$tmp/c1" || failmsg "compare does not say the ratio is paired"

# compare's default is 5 seeds, run's 1; --seeds 1 gives compare one run
"$bin" compare "${W[@]}" --policy nested=v2 --policy nested=fullmm --json >"$tmp/cd" || failmsg "compare default exit"
"$bin" compare "${W[@]}" --seeds 1 --policy nested=v2 --policy nested=fullmm --json >"$tmp/c1j" || failmsg "compare --seeds 1 exit"
"$bin" run "${W[@]}" --json >"$tmp/rd" || failmsg "run default exit"
python3 - "$tmp" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
cd = json.load(open(d + "/cd"))["runs"]
c1 = json.load(open(d + "/c1j"))["runs"]
rd = json.load(open(d + "/rd"))
bad = 0
if [r.get("seeds") for r in cd] != [5, 5] or any(len(r["stats"]["wall_ns"]["values"]) != 5 for r in cd):
    print("seeds: FAIL: compare without --seeds did not run 5 seeds: %r" % [r.get("seeds") for r in cd]); bad = 1
if any("seeds" in r or "stats" in r for r in c1) or "seeds" in rd or "stats" in rd:
    print("seeds: FAIL: compare --seeds 1 or run without --seeds is not a single run"); bad = 1
sys.exit(bad)
PY
"$bin" compare "${W[@]}" --policy nested=v2 --policy nested=fullmm | grep -q "seeds 1\.\.5$" ||
	failmsg "compare's default table header does not say seeds 1..5"

# exact mode: jitter=0 gives every seed the same numbers in workloads that
# draw nothing themselves (mmap8 draws its user-loop overhead per iteration)
for w in "madv_race" "page_fault3 --tasks 2 -w size=64K"; do
	"$bin" run $w --seeds 3 -D jitter=0 --json >"$tmp/z" || failmsg "$w jitter=0 exit"
	"$bin" run $w --seeds 3 --json >"$tmp/z5" || failmsg "$w jitter=5 exit"
	python3 - "$tmp/z" "$tmp/z5" "$w" <<'PY' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))
j5 = json.load(open(sys.argv[2]))
bad = [k for k, v in j["stats"].items() if k != "tlbi" and len(set(v["values"])) != 1]
if bad:
    print("seeds: FAIL: %s: jitter=0 seeds differ in %r" % (sys.argv[3], bad)); sys.exit(1)
if len(set(j5["stats"]["wall_ns"]["values"])) == 1:
    print("seeds: FAIL: %s: the default jitter left every seed equal" % sys.argv[3]); sys.exit(1)
PY
done

# violations over seeds: metrics.violations is their total (one violation in
# one seed of five must not round to 0 as a mean would), first_violation is
# set when any seed saw one, and --fail-on-violation exits 1 (nested=prefix
# is the pre-fix kernel of seed 000; its seeds see a few violations each)
"$bin" compare mmap8 --iters 5 --policy nested=prefix --policy nested=need_flush_all --json \
	--fail-on-violation >"$tmp/v" 2>"$tmp/ve"
python3 - "$tmp/v" "$?" <<'PY' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))
rc = int(sys.argv[2])
tot, bad = 0, 0
for i, r in enumerate(j["runs"]):
    vals = r["stats"]["violations"]["values"]
    if r["metrics"]["violations"] != sum(vals):
        print("seeds: FAIL: column %d: metrics.violations %d, seeds %r" %
              (i + 1, r["metrics"]["violations"], vals)); bad = 1
    if sum(vals) and not r["first_violation"]:
        print("seeds: FAIL: column %d: violations but no first_violation" % (i + 1)); bad = 1
    tot += sum(vals)
if tot == 0:
    print("seeds: FAIL: no seed saw a violation; the test needs a command whose seeds do"); bad = 1
if rc != 1:
    print("seeds: FAIL: --fail-on-violation exit %d with %d violations" % (rc, tot)); bad = 1
sys.exit(bad)
PY

# bad input: one line, exit 2
for a in "--seeds 0" "--seeds 1001" "--seeds x" "-j 0" "--jobs 1025"; do
	"$bin" run mmap8 $a >"$tmp/o" 2>"$tmp/e"
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] || failmsg "'$a': exit $rc, $(head -c 200 "$tmp/e")"
done
"$bin" check mmap5 --seeds 2 >"$tmp/o" 2>"$tmp/e"; [ $? = 2 ] || failmsg "check accepted --seeds"
"$bin" run mmap8 -D jitter=51 >"$tmp/o" 2>"$tmp/e"; [ $? = 2 ] || failmsg "jitter=51 accepted"
"$bin" run mmap8 --seed 9223372036854775807 --seeds 2 >"$tmp/o" 2>"$tmp/e"
[ $? = 2 ] || failmsg "a last seed past INT64_MAX was accepted"

if [ $fail = 0 ]; then
	echo "seeds: PASS"
	exit 0
fi
exit 1
