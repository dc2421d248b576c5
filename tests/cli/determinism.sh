#!/usr/bin/env bash
# determinism.sh TLBSIM - same inputs + seed = byte-identical output
# (docs/output.md: "the same command and seed give byte-identical output").
#   1. run mmap8 --iters 200 --threads 4 --json, twice: cmp
#   2. compare mmap5 --iters 2 --policy nested=prefix --policy nested=fullmm
#      --json, twice: cmp
#   3. a different --seed still gives valid JSON (python3 -m json.tool)
set -u
tlbsim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
die() { echo "determinism: FAIL: $*"; fail=1; }

run_twice() {
	local name=$1 json=$2
	shift 2
	"$tlbsim" "$@" >"$tmp/$name.1" || die "$name: first run exited $?"
	"$tlbsim" "$@" >"$tmp/$name.2" || die "$name: second run exited $?"
	[ -s "$tmp/$name.1" ] || die "$name: empty output"
	cmp "$tmp/$name.1" "$tmp/$name.2" || die "$name: outputs differ"
	if [ "$json" = json ]; then
		python3 -m json.tool "$tmp/$name.1" >/dev/null || die "$name: not valid JSON"
	fi
}

run_twice run json run mmap8 --iters 200 --threads 4 --json
run_twice compare json compare mmap5 --iters 2 --policy nested=prefix --policy nested=fullmm --json
# the human table as well
run_twice table text run mmap8 --iters 50 --threads 2
# processes: fork/exec/exit/wait4 on 32 CPUs, lognormal job times from the seed
run_twice kbuild json run kbuild --cpus 32 --iters 2 -w job_ms=2 -w ws_pages=4 --json

"$tlbsim" run mmap8 --iters 200 --threads 4 --json --seed 12345 >"$tmp/seed" ||
	die "--seed 12345: exited $?"
python3 -m json.tool "$tmp/seed" >/dev/null || die "--seed 12345: not valid JSON"
python3 - "$tmp/seed" <<'PY' || die "--seed 12345: seed not recorded"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["seed"] == 12345 else 1)
PY

if [ $fail = 0 ]; then
	echo "determinism: PASS"
	exit 0
fi
exit 1
