#!/usr/bin/env bash
# bench_check.sh - speed of `tlbsim check` (issue 3 targets: the seed-000
# violation found from scratch in <= 1 s; >= 10 000 schedules/s for 2-4 thread
# scenarios). Usage: bench/bench_check.sh [path/to/tlbsim]
set -u
T=${1:-./build/release/tlbsim}
t() { local s e; s=$(date +%s%N); "$@" >/tmp/bench_check.out; rc=$?; e=$(date +%s%N);
      printf '%6.3f s  rc=%d  %s\n' "$(echo "($e-$s)/1000000000" | bc -l)" "$rc" "$*"; }
echo "== time to find the seed-000 violation from scratch (exit 1 expected)"
for p in falkor-46 arm64-4k; do
	for st in random pct dfs; do
		t "$T" check mmap5 --profile $p --policy nested=prefix --strategy $st
		grep -E "found after" /tmp/bench_check.out
	done
done
echo "== exploration throughput with no violation (fixed policies, 3 s budget)"
for args in "mmap5 --profile falkor-46 --policy nested=fullmm" \
	    "mmap5 --profile x86-24 --policy nested=fullmm" \
	    "madv_race --policy nested_check=on" \
	    "madv_race -w advice=free --policy nested_check=on" \
	    "lazy_tables --policy x86_lazy=freed_tables"; do
	# shellcheck disable=SC2086
	"$T" check $args --time-limit 3 --runs 1000000000 | grep "schedules/s" | sed "s/^/$args: /"
done
echo "== wide machines: tlb_flush2 -w mode=threads on x86-256, 5 s budget (steps/s: a schedule"
echo "   outlasts --max-steps, every thread's MADV_DONTNEED sends an IPI to every other CPU)"
for c in 256 1024; do
	for st in random pct dfs; do
		"$T" check tlb_flush2 --profile x86-256 --cpus $c -w mode=threads --strategy $st \
			--seed 7 --time-limit 5 | grep "schedules/s" | sed "s/^/--cpus $c --strategy $st: /"
	done
done
