#!/usr/bin/env bash
# time_identity.sh TLBSIM - docs/output.md: for every run object of run and
# compare --json, user_ns + sys_ns + idle_ns == wall_ns x cpus (also for the
# means over several seeds), and no CPU was busy longer than the run (idle is
# never clamped).
#
# The x86 CR3 write of switch_mm (cr3_flush_ns) used to be added to a CPU's
# sys time without elapsing there, so a large -D cr3_flush_ns gave more busy
# time than wall time (madv_race, lazy_tables). The configurations below
# switch mms on idle and busy CPUs, flush lazy CPUs by IPI and context-switch
# between threads, with the default and with a large CR3 cost.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "time_identity: FAIL: $*"; fail=1; }

check() {	# args...
	"$bin" "$@" --json >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" != 0 ]; then
		failmsg "exit $rc: $*: $(head -c 300 "$tmp/err")"
		return
	fi
	python3 - "$tmp/out" "$*" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"] if "runs" in d else [d]
bad = 0
for i, r in enumerate(runs):
    m = r["metrics"]
    busy = m["user_ns"] + m["sys_ns"]
    total = busy + m["idle_ns"]
    want = m["wall_ns"] * r["cpus"]
    if total != want:
        print("time_identity: FAIL: %s: run %d: user %d + sys %d + idle %d = %d, "
              "wall %d x %d cpus = %d (%+d)" % (sys.argv[2], i, m["user_ns"], m["sys_ns"],
                                                m["idle_ns"], total, m["wall_ns"], r["cpus"],
                                                want, total - want))
        bad = 1
sys.exit(bad)
PY
}

for cr3 in 50 1000000; do
	check run madv_race --profile x86-24 -D cr3_flush_ns=$cr3
	check run madv_race --profile x86-24 -w advice=free -D cr3_flush_ns=$cr3
	check run lazy_tables -D cr3_flush_ns=$cr3
	check run lazy_tables --policy x86_lazy=never -D cr3_flush_ns=$cr3
	check run mmap5 --profile x86-24 --iters 2 -w loops=5 -D cr3_flush_ns=$cr3
	check run mmap8 --profile x86-24 --iters 3 --threads 8 --cpus 4 -D cr3_flush_ns=$cr3
	check run mmap8 --profile x86-24 --iters 2 --threads 4 -D pcid=0 -D cr3_flush_ns=$cr3
	check run tlb_flush1 --profile x86-24 --cpus 4 -w size=64K -w mode=threads -D cr3_flush_ns=$cr3
	check compare mmap8 --profile x86-24 --iters 2 --threads 6 --cpus 3 --seeds 1 -D cr3_flush_ns=$cr3 \
		--policy nested=prefix --policy nested=fullmm,x86_lazy=never
done
# the largest CR3 cost the limits allow
check run lazy_tables -D cr3_flush_ns=1000000000
# IPIs (the purge's kernel flushes) that hit CPUs spinning for
# free_vmap_area_lock: the spin's sys time already covers the handler, which
# used to be counted a second time
check run test_vmalloc --cpus 8 -w nr_threads=2 -w nr_pages=2 -w test_loop_count=10 \
	--policy vmap_purge=global
check run test_vmalloc --profile arm64-128 --cpus 8 -w nr_threads=4 -w run_test_mask=1 \
	-w test_loop_count=2000 --policy vmap_purge=global
check run kbuild --cpus 16 -w jobs=40 -w ws_pages=4
# a 1 ms IPI handler on an idle CPU that ends after the last thread exited
# (seeds 4 and 8): its sys time had not elapsed by the old wall time
for seed in 4 8; do
	check run lazy_tables -D ipi_handler_ns=1000000 --seed $seed
done
check compare lazy_tables --seed 4 --seeds 1 -D ipi_handler_ns=1000000 --policy ksm_wp=pending \
	--policy ksm_wp=pte
# means over seeds (compare's default five): each metric's mean rounded on
# its own missed the identity by a few ns
check run mmap8 --iters 3 --threads 3 --seeds 5
check compare kbuild --tasks 3 --cpus 3 --iters 2 -w job_ms=1 --policy nested=v2 --policy nested=fullmm
check compare mmap8 --iters 4 --threads 5 --seeds 3 --policy nested=v2 --policy nested=fullmm
# every cost at its 1 s limit, 4096 threads on 1024 CPUs: wall x cpus passes
# 2^64 ns; refused with one line (the totals wrapped: idle 31.3 %)
D=$("$bin" list params | awk 'NR > 1 && $2 == "ns" { printf "-D %s=1000000000 ", $1 }')
# shellcheck disable=SC2086
timeout 120 "$bin" run mmap8 $D --iters 20 --threads 4096 --cpus 1024 --json >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "pass the 64-bit ns counters" "$tmp/err" ||
	failmsg "CPU time past 2^64 ns: exit $rc, $(head -c 300 "$tmp/err")"

if [ $fail = 0 ]; then
	echo "time_identity: PASS"
	exit 0
fi
exit 1
