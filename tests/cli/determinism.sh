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
# the human table as well, but for its first line: the host seconds the
# command took (present in the table, absent from --json and --csv)
"$tlbsim" run mmap8 --iters 50 --threads 2 >"$tmp/t1" || die "table: exited $?"
"$tlbsim" run mmap8 --iters 50 --threads 2 >"$tmp/t2" || die "table: exited $?"
for f in t1 t2; do
	head -n 1 "$tmp/$f" | grep -qE '^# simulated times \(profile falkor-46\); host [0-9]+\.[0-9]{2} s$' ||
		die "table: first line is not the simulated-times note: $(head -n 1 "$tmp/$f")"
done
[ "$(sed 1d "$tmp/t1" | wc -l)" -gt 10 ] || die "table: no table after the first line"
cmp <(sed 1d "$tmp/t1") <(sed 1d "$tmp/t2") || die "table: outputs differ past the first line"
grep -q "simulated times\|host [0-9]" "$tmp/run.1" && die "--json holds the simulated-times note"
"$tlbsim" run mmap8 --iters 50 --threads 2 --csv >"$tmp/c1" || die "csv: exited $?"
grep -q "simulated times" "$tmp/c1" && die "--csv holds the simulated-times note"
"$tlbsim" run mmap8 --iters 50 --threads 2 --kernel 5.1 | head -n 1 |
	grep -qE '^# simulated times \(profile falkor-46, kernel 5\.1\); host ' ||
	die "table with --kernel 5.1: the first line does not name the kernel"
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
