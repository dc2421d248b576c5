#!/usr/bin/env bash
# seed_pair.sh TLBSIM ITERS - the seed-000 pair at bench size (16 threads of
# 16 MiB mappings on each profile, iterations cut to ITERS so it fits in CI),
# plus the shape that exposed the zap_pte_range use-after-free (64 pages
# written per mapping). Run by every preset; under asan (every array growth
# moving its array) any stale pointer faults. Checks exit 0, empty stderr,
# valid JSON and user + sys + idle = wall x cpus for every run.
set -u
bin=$1
iters=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "seed_pair: FAIL: $*"; fail=1; }
one() {	# name args...
	local name=$1
	shift
	"$bin" "$@" --json >"$tmp/$name.json" 2>"$tmp/$name.err"
	local rc=$?
	[ "$rc" = 0 ] || failmsg "$name: exit $rc"
	[ -s "$tmp/$name.err" ] && { failmsg "$name: stderr:"; head -20 "$tmp/$name.err"; }
	python3 - "$tmp/$name.json" <<'PY' || failmsg "$name: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d.get("runs", [d]):
    m = r["metrics"]
    assert m["user_ns"] + m["sys_ns"] + m["idle_ns"] == m["wall_ns"] * r["cpus"], m
    assert m["ops"] == r["threads"] * r["iters"], (m["ops"], r["threads"], r["iters"])
PY
}
for p in falkor-46 arm64-4k arm64-16k x86-24; do
	one "pair-$p" compare mmap8 --profile "$p" --iters "$iters" --seeds 1 \
		--policy nested=v2 --policy nested=fullmm
done
one touch64 run mmap8 -w touch=64 --iters $(( iters / 10 + 1 ))
one touch256 run mmap8 --profile arm64-16k -w touch=256 --iters 2
if [ $fail = 0 ]; then
	echo "seed_pair: PASS"
	exit 0
fi
exit 1
