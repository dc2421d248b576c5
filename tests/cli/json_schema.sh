#!/usr/bin/env bash
# json_schema.sh TLBSIM HEADER [schema|command]
#
# schema (default): docs/output.md JSON contract.
#   run --json: exactly one JSON object + newline, with keys tool, version,
#   command, workload, params, profile, cpus, threads, iters, seed, policy,
#   metrics; metrics holds every name of TLBSIM_METRICS in HEADER
#   (include/tlbsim/tlbsim.h) as a non-negative integer, plus metrics.tlbi
#   with vale1is vae1is aside1is vaale1is vmalle1is local rvale1is rvae1is (= TLBSIM_TLBI_KINDS).
#   compare --json: {"runs":[...]} with one run per --policy, in command-line
#   order, each with the same schema; policy holds every knob printed by
#   `tlbsim list policies`.
# command: the "command" key is the full command line as given (argument
#   order preserved).
set -u
tlbsim=$1
header=$2
mode=${3:-schema}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "$mode" = command ]; then
	"$tlbsim" run mmap8 --iters 2 --threads 2 --json >"$tmp/cmd.json" || exit 1
	exec python3 - "$tmp/cmd.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = "tlbsim run mmap8 --iters 2 --threads 2 --json"
if d["command"] != want:
    print("json_schema: FAIL: command = %r, want %r" % (d["command"], want))
    sys.exit(1)
print("json_schema: PASS")
PY
fi

"$tlbsim" run mmap8 --iters 3 --threads 2 --seed 5 -D tlbi_op_ns=400 --json \
	>"$tmp/run.json" || { echo "json_schema: FAIL: run exited $?"; exit 1; }
"$tlbsim" compare mmap8 --iters 2 --threads 2 --seeds 1 --policy nested=v2 --policy nested=prefix \
	--policy nested=fullmm --json >"$tmp/cmp.json" ||
	{ echo "json_schema: FAIL: compare exited $?"; exit 1; }

"$tlbsim" list policies >"$tmp/policies.txt" ||
	{ echo "json_schema: FAIL: list policies exited $?"; exit 1; }

exec python3 - "$header" "$tmp/run.json" "$tmp/cmp.json" "$tmp/policies.txt" <<'PY'
import json, re, sys

header, run_path, cmp_path, pol_path = sys.argv[1:5]
errors = []

def err(msg):
    errors.append(msg)

def macro_names(text, macro):
    m = re.search(r"#define\s+%s\(X\)((?:.*\\\n)*.*)" % macro, text)
    if not m:
        err("macro %s not found in %s" % (macro, header))
        return []
    return re.findall(r"\bX\((\w+)\)", m.group(1))

htext = open(header).read()
metrics = macro_names(htext, "TLBSIM_METRICS")
kinds = macro_names(htext, "TLBSIM_TLBI_KINDS")
if len(metrics) < 10:
    err("too few metrics parsed from the header: %r" % metrics)
# every policy knob (lines "knob: meaning" of `tlbsim list policies`)
knobs = re.findall(r"^(\w+):", open(pol_path).read(), re.M)
if "nested" not in knobs:
    err("list policies does not list the nested knob: %r" % knobs)
want_kinds = ["vale1is", "vae1is", "aside1is", "vaale1is", "vmalle1is", "local", "rvale1is", "rvae1is"]
if sorted(kinds) != sorted(want_kinds):
    err("TLBSIM_TLBI_KINDS = %r, want %r" % (kinds, want_kinds))

def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)

def check_run(d, where, threads, iters, seed, nested, overrides):
    if not isinstance(d, dict):
        err("%s: not an object" % where)
        return
    for k in ["tool", "version", "command", "workload", "params", "profile", "cpus",
              "threads", "iters", "seed", "policy", "metrics"]:
        if k not in d:
            err("%s: missing key %r" % (where, k))
    if errors:
        return
    if d["tool"] != "tlbsim":
        err("%s: tool = %r" % (where, d["tool"]))
    for k in ["version", "command", "workload", "profile"]:
        if not isinstance(d[k], str) or not d[k]:
            err("%s: %s is not a non-empty string" % (where, k))
    if not d["command"].startswith("tlbsim "):
        err("%s: command %r does not start with 'tlbsim '" % (where, d["command"]))
    if d["workload"] != "mmap8":
        err("%s: workload = %r" % (where, d["workload"]))
    p = d["params"]
    if not isinstance(p, dict) or not all(isinstance(v, str) for v in p.values()):
        err("%s: params must be an object of strings" % where)
    elif not {"size", "touch", "map"} <= set(p):
        err("%s: params lacks mmap8's size/touch/map: %r" % (where, p))
    for k, want in [("threads", threads), ("iters", iters), ("seed", seed)]:
        if not is_int(d[k]) or d[k] != want:
            err("%s: %s = %r, want %r" % (where, k, d[k], want))
    if not is_int(d["cpus"]) or d["cpus"] < 1:
        err("%s: cpus = %r" % (where, d["cpus"]))
    if d.get("arch") not in ("x86_64", "arm64"):
        err("%s: arch = %r" % (where, d.get("arch")))
    pol = d["policy"]
    if not isinstance(pol, dict) or sorted(pol) != sorted(knobs):
        err("%s: policy keys %r, want every knob of list policies %r" % (where, pol, knobs))
    elif pol["nested"] != nested or not all(isinstance(v, str) for v in pol.values()):
        err("%s: policy = %r, want nested=%r and string values" % (where, pol, nested))
    if d.get("overrides") != overrides:
        err("%s: overrides = %r, want %r" % (where, d.get("overrides"), overrides))
    m = d["metrics"]
    if not isinstance(m, dict):
        err("%s: metrics not an object" % where)
        return
    for name in metrics:
        if name not in m:
            err("%s: metrics lacks %r" % (where, name))
        elif not is_int(m[name]) or m[name] < 0:
            err("%s: metrics.%s = %r is not a non-negative integer" % (where, name, m[name]))
    t = m.get("tlbi")
    if not isinstance(t, dict):
        err("%s: metrics.tlbi missing" % where)
        return
    for k in want_kinds:
        if k not in t:
            err("%s: metrics.tlbi lacks %r" % (where, k))
        elif not is_int(t[k]) or t[k] < 0:
            err("%s: metrics.tlbi.%s = %r" % (where, k, t[k]))
    extra = set(m) - set(metrics) - {"tlbi"}
    if extra:
        err("%s: metrics has keys not in TLBSIM_METRICS: %r" % (where, sorted(extra)))

raw = open(run_path).read()
if not raw.endswith("}\n") or raw.count("\n") != 1:
    err("run --json: want exactly one JSON object followed by one newline")
try:
    run = json.loads(raw)
    check_run(run, "run", 2, 3, 5, "fullmm", {"tlbi_op_ns": 400})
    if not errors and run["metrics"]["ops"] != 2 * 3:
        err("run: metrics.ops = %r, want threads x iters = 6" % run["metrics"]["ops"])
except ValueError as e:
    err("run --json is not JSON: %s" % e)

try:
    cmp = json.load(open(cmp_path))
    if not isinstance(cmp, dict) or list(cmp) != ["runs"]:
        err('compare --json: want {"runs": [...]}, got keys %r' % (list(cmp) if isinstance(cmp, dict) else cmp))
    else:
        runs = cmp["runs"]
        order = ["v2", "prefix", "fullmm"]
        if not isinstance(runs, list) or len(runs) != len(order):
            err("compare --json: %r runs, want %d" % (len(runs), len(order)))
        else:
            for i, (r, pol) in enumerate(zip(runs, order)):
                check_run(r, "compare run %d" % i, 2, 2, 1, pol, {})
except ValueError as e:
    err("compare --json is not JSON: %s" % e)

for e in errors:
    print("json_schema: FAIL: " + e)
if errors:
    sys.exit(1)
print("json_schema: PASS (%d metrics, %d tlbi kinds)" % (len(metrics), len(kinds)))
PY
