#!/usr/bin/env bash
# csv.sh TLBSIM - --csv of run, compare and check (docs/output.md "CSV"):
#   * one header line whose columns are the configuration, then every key of
#     the JSON metrics and tlbi (the header is built from the JSON of the same
#     run, not from a list in this test), with METRIC_mean/_ci95 for seeds > 1;
#   * the values equal the JSON's; a policy with commas is quoted;
#   * check --csv: one row, its fields match check --json.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "csv: FAIL: $*"; fail=1; }
W=(mmap8 --iters 20 --threads 3 --profile x86-24)
"$bin" run "${W[@]}" --policy nested=v2,x86_lazy=never --csv >"$tmp/r.csv" || failmsg "run --csv exit $?"
"$bin" run "${W[@]}" --policy nested=v2,x86_lazy=never --json >"$tmp/r.json" || failmsg "run --json exit $?"
"$bin" compare "${W[@]}" --seeds 3 --policy nested=v2 --policy nested=fullmm --csv >"$tmp/c.csv" ||
	failmsg "compare --csv exit $?"
"$bin" compare "${W[@]}" --seeds 3 --policy nested=v2 --policy nested=fullmm --json >"$tmp/c.json" ||
	failmsg "compare --json exit $?"
python3 - "$tmp" <<'PY' || fail=1
import csv, json, sys
d = sys.argv[1]
bad = 0
def fail(m):
    global bad
    print("csv: FAIL: " + m); bad = 1
raw = open(d + "/r.csv").read()
if raw.count("\n") != 2 or '"nested=v2,x86_lazy=never"' not in raw:
    fail("run --csv is not a header and one row with the policy quoted: %r" % raw[:300])
r = list(csv.DictReader(open(d + "/r.csv")))
j = json.load(open(d + "/r.json"))
metrics = [k for k in j["metrics"] if k != "tlbi"] + ["tlbi_" + k for k in j["metrics"]["tlbi"]]
conf = ["workload", "profile", "cpus", "threads", "iters", "policy", "seed", "seeds"]
if list(r[0].keys()) != conf + metrics:
    fail("run header %r" % list(r[0].keys())[:12])
row = r[0]
for k in metrics:
    v = j["metrics"][k] if k in j["metrics"] else j["metrics"]["tlbi"][k[5:]]
    if row[k] != str(v):
        fail("%s: csv %s json %s" % (k, row[k], v)); break
for k in ("workload", "profile", "cpus", "threads", "iters", "seed"):
    if row[k] != str(j[k]):
        fail("%s: csv %s json %s" % (k, row[k], j[k]))
if row["policy"] != "nested=v2,x86_lazy=never" or row["seeds"] != "1":
    fail("policy/seeds %r %r" % (row["policy"], row["seeds"]))
c = list(csv.DictReader(open(d + "/c.csv")))
cj = json.load(open(d + "/c.json"))["runs"]
want = conf + [m + s for m in metrics for s in ("_mean", "_ci95")]
if list(c[0].keys()) != want:
    fail("compare --seeds 3 header %r" % list(c[0].keys())[:12])
if [x["policy"] for x in c] != ["nested=v2", "nested=fullmm"]:
    fail("compare rows %r" % [x["policy"] for x in c])
for x, y in zip(c, cj):
    st = y["stats"]
    for k in ("wall_ns", "sys_ns", "ipi_sent"):
        if abs(float(x[k + "_mean"]) - st[k]["mean"]) > 0.001 or abs(float(x[k + "_ci95"]) - st[k]["ci95"]) > 0.001:
            fail("compare %s: csv %s±%s json %s±%s" % (k, x[k + "_mean"], x[k + "_ci95"], st[k]["mean"], st[k]["ci95"]))
    if x["seeds"] != "3":
        fail("compare seeds %r" % x["seeds"])
sys.exit(bad)
PY

"$bin" check mmap5 --profile falkor-46 --policy nested=prefix --csv >"$tmp/k.csv"
[ $? = 1 ] || failmsg "check --csv of the 2019 bug: not exit 1"
"$bin" check mmap5 --profile falkor-46 --policy nested=prefix --json >"$tmp/k.json"
"$bin" check mmap5 --profile falkor-46 --policy nested=fullmm --runs 30 --csv >"$tmp/k0.csv" ||
	failmsg "check --csv of the fix: exit $?"
python3 - "$tmp" <<'PY' || fail=1
import csv, json, sys
d = sys.argv[1]
k = list(csv.DictReader(open(d + "/k.csv")))
j = json.load(open(d + "/k.json"))
bad = 0
if len(k) != 1:
    print("csv: FAIL: check --csv rows %d" % len(k)); sys.exit(1)
k = k[0]
for a, b in (("schedules", j["schedules"]), ("steps", j["steps"]), ("invariant", j["violation"]["invariant"]),
             ("token", j["violation"]["token"]), ("text", j["violation"]["text"]),
             ("decisions", j["violation"]["decisions"]), ("va", j["violation"]["va"])):
    if k[a] != str(b):
        print("csv: FAIL: check %s: csv %r json %r" % (a, k[a], b)); bad = 1
k0 = list(csv.DictReader(open(d + "/k0.csv")))[0]
if k0["invariant"] != "" or k0["schedules"] != "30":
    print("csv: FAIL: clean check row %r" % k0); bad = 1
sys.exit(bad)
PY
# run's and check's policy column joins every --policy, however many: sixteen of
# 228 bytes each (3663 bytes) used to be cut at 1023, mid-value, and a 17th and
# later --policy (applied to the run) were left out of the column
P=x86_tlb_gen=new_gen,x86_should_flush=loaded_mm,x86_flush=invlpgb,tlb_flush_cond=bits,ubc_check_madv_free=off,arm64_batch=none,numa_pending=none,uffd_wp_flush=none,migrate_dirty=drop,pfnmap_flush=stable_first,x86_range_freed=true
args=()
for i in $(seq 40); do args+=(--policy "$P"); done
"$bin" run mmap5 --iters 1 "${args[@]}" --csv >"$tmp/long.csv" || failmsg "run --csv, 40 policies: exit $?"
"$bin" check mmap5 --runs 1 "${args[@]}" --csv >"$tmp/longk.csv" ||
	failmsg "check --csv, 40 policies: exit $?"
python3 - "$tmp" "$P" <<'PY' || fail=1
import csv, sys
want = ",".join([sys.argv[2]] * 40)
bad = 0
for f in ("long.csv", "longk.csv"):
    row = list(csv.DictReader(open(sys.argv[1] + "/" + f)))[0]
    if row["policy"] != want:
        print("csv: FAIL: %s: policy column, 40 --policy: %d bytes, want %d: ...%r" % (
            f, len(row["policy"]), len(want), row["policy"][-40:]))
        bad = 1
sys.exit(bad)
PY

if [ $fail = 0 ]; then
	echo "csv: PASS"
	exit 0
fi
exit 1
