#!/usr/bin/env bash
# trace_scenarios.sh TLBSIM - the timeline of each historical counterexample
# is a valid Perfetto trace (trace_check.py: slices nest per CPU track, flows
# are paired), and its arrows are the ones the model sent:
#  - mmap8 --iters 3, nested=prefix (the reproducer of the overlap bug);
#  - lazy_tables, x86_lazy=never: the lazy CPU gets no IPI, so no arrow may
#    point at it (the missing IPI *is* the bug);
#  - madv_race on x86: every ipi arrow starts at an ipi_target slice and
#    ends on the CPU that slice names.
set -u
bin=$1
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "trace_scenarios: FAIL: $*"; fail=1; }
gen() {	# name args...
	local name=$1
	shift
	"$bin" check "$@" --trace "$tmp/$name.json" >"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$?
	[ "$rc" = 1 ] || { failmsg "$name: exit $rc, want 1"; cat "$tmp/$name.err"; }
}
gen mmap8 mmap8 --iters 3 --policy nested=prefix --runs 20000
gen mmap5 mmap5 --profile falkor-46 --policy nested=prefix --runs 20000
gen lazy lazy_tables --policy x86_lazy=never --runs 20000
gen madv madv_race --policy nested_check=off --runs 20000
python3 "$here/trace_check.py" "$tmp"/*.json || failmsg "trace_check"
python3 - "$tmp/lazy.json" "$tmp/lazy.out" "$tmp/madv.json" <<'PY' || failmsg "arrow content"
import json, re, sys
lazy = json.load(open(sys.argv[1]))["traceEvents"]
report = open(sys.argv[2]).read()
m = re.search(r"cpu (\d+) \(lazy TLB\)", report) or re.search(r"^  cpu:\s+(\d+)", report, re.M)
lazy_cpu = int(m.group(1))
to_lazy = [e for e in lazy if e.get("ph") == "f" and e["tid"] == lazy_cpu and e["name"] == "ipi"]
assert not to_lazy, f"an IPI arrow points at the lazy CPU {lazy_cpu}"
madv = json.load(open(sys.argv[3]))["traceEvents"]
# several targets of one round start at the same time on the sender's track
slices = {}
for e in madv:
    if e.get("ph") == "X" and e["name"] == "ipi_target":
        slices.setdefault((e["tid"], e["ts"]), []).append(e["args"]["event"])
for s in (e for e in madv if e.get("ph") == "s" and e["name"] == "ipi"):
    f = next(e for e in madv if e.get("ph") == "f" and e["id"] == s["id"])
    sl = slices.get((s["tid"], s["ts"]))
    assert sl, f"ipi arrow {s['id']} does not start at an ipi_target slice"
    assert f"tlbsim_ipi_target: cpu {f['tid']}" in sl, (sl, f["tid"])
PY
if [ $fail = 0 ]; then
	echo "trace_scenarios: PASS"
	exit 0
fi
exit 1
