#!/usr/bin/env bash
# equiv.sh TLBSIM SCENARIOS_DIR - each shipped scenario file gives what its
# built-in C workload gives for the same arguments and seed:
#   - run/compare --json: byte-identical output but for the "command" field
#     (every metric, the resolved parameters, policy, profile, threads);
#   - check --runs N: the same exit status and the same report (violation,
#     minimised schedule, trace, the replay token's decisions) but for host
#     times, the replay command's workload word and the token's
#     configuration hash and checksum (a file's token names its text).
# Prints "equiv: PASS" or "equiv: FAIL: ..." lines.
set -u
bin=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
strip_json() { sed -E 's/"command":"([^"\\]|\\.)*",//'; }
strip_check() {
	sed -E -e 's/ in [0-9.]+ s(;|\))/ in X s\1/' -e 's/explored in [0-9.]+ s \(.*\)$/explored/' \
	       -e 's#^(replay: tlbsim check) [^ ]+#\1 W#' \
	       -e 's/t2\.[0-9a-f]{8}\.([^. ]*)\.[0-9a-f]{8}/t2.H.\1.S/g'
}
same_run() {	# WORKLOAD ARGS...
	local w=$1; shift
	n=$((n + 1))
	"$bin" run "$w" --json "$@" 2>"$tmp/be" | strip_json >"$tmp/b"
	local rb=${PIPESTATUS[0]}
	"$bin" run "$dir/$w.tlbs" --json "$@" 2>"$tmp/fe" | strip_json >"$tmp/f"
	local rf=${PIPESTATUS[0]}
	if [ $rb != 0 ] || [ $rf != 0 ] || ! cmp -s "$tmp/b" "$tmp/f"; then
		echo "equiv: FAIL: run $w $*: exit $rb vs $rf; output differs:"
		cat "$tmp/be" "$tmp/fe"; diff "$tmp/b" "$tmp/f" | head -c 2000; echo
		fail=1
	fi
}
same_compare() {
	local w=$1; shift
	n=$((n + 1))
	"$bin" compare "$w" --json "$@" | strip_json >"$tmp/b"
	"$bin" compare "$dir/$w.tlbs" --json "$@" | strip_json >"$tmp/f"
	if ! cmp -s "$tmp/b" "$tmp/f" || [ ! -s "$tmp/b" ]; then
		echo "equiv: FAIL: compare $w $*: output differs"; fail=1
	fi
}
same_check() {	# WANT_EXIT WORKLOAD ARGS...
	local want=$1 w=$2; shift 2
	n=$((n + 1))
	# --time-limit 100: the runs end on their --runs count (and minimisation
	# completes), not on the default 10 s budget of a slow (ASan, loaded) host
	"$bin" check "$w" --time-limit 100 "$@" >"$tmp/b" 2>&1
	local rb=$?
	"$bin" check "$dir/$w.tlbs" --time-limit 100 "$@" >"$tmp/f" 2>&1
	local rf=$?
	if [ $rb != "$want" ] || [ $rf != "$want" ]; then
		echo "equiv: FAIL: check $w $*: exit $rb (built-in) and $rf (file), want $want"
		fail=1
	fi
	if ! cmp -s <(strip_check <"$tmp/b") <(strip_check <"$tmp/f"); then
		echo "equiv: FAIL: check $w $*: reports differ:"
		diff <(strip_check <"$tmp/b") <(strip_check <"$tmp/f") | head -20
		fail=1
	fi
}

same_run mmap8 --iters 20
same_run mmap8 --iters 5 --threads 4 --seed 3 -w touch=2 -w map=private --profile x86-24
same_run mmap8 --iters 10 --cpus 8 --seed 11 -w size=1M --policy nested=v2 -D jitter=0
same_run mmap5 --iters 2
same_run mmap5 --iters 1 -w loops=50 --policy nested=prefix --seed 5 --profile arm64-4k
same_run madv_race
same_run madv_race -w advice=free --policy nested_check=off --seed 9
same_run madv_race -w writes=10 --iters 4 --profile falkor-46
same_run lazy_tables
same_run lazy_tables --policy x86_lazy=never --iters 3 --seed 4
same_run writeback_race
same_run writeback_race --seed 3 -w writes=3 -w flushes=3 --iters 2
same_run spurious_race
same_run spurious_race --seed 5 -w writes=4 --policy spurious_flush=local --profile x86-24
same_compare mmap8 --iters 5 --seeds 2 --policy nested=v2 --policy nested=fullmm
same_check 1 madv_race --policy nested_check=off --runs 3000
same_check 1 madv_race --policy nested_check=off -w advice=free --runs 3000 --seed 2
same_check 0 madv_race --runs 3000
same_check 1 lazy_tables --policy x86_lazy=never --runs 3000
same_check 0 lazy_tables --runs 3000
same_check 1 mmap5 --policy nested=prefix --runs 3000
same_check 0 mmap5 --runs 3000
same_check 0 mmap8 --runs 1000
same_check 1 mmap8 --policy nested=prefix --runs 3000 --seed 3
same_check 0 writeback_race --runs 3000
same_check 0 writeback_race --policy fault_retry=none --runs 3000 --seed 4
same_check 0 writeback_race -w writes=20 -w flushes=5 --runs 3000 --seed 4
same_check 0 spurious_race --runs 3000 --policy spurious_flush=noop
echo "equiv: $n comparisons"
[ $fail = 0 ] && echo "equiv: PASS" || echo "equiv: FAIL"
