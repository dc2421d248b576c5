#!/usr/bin/env bash
# kernel.sh TLBSIM - --kernel VERSION presets (tlbsim list kernels):
#   * v5.1 has the 000 bug (check mmap5 finds it), v5.2 the fix (clean);
#   * v5.8 broadcasts a VALE1IS per retried write fault on arm64 (001),
#     v5.9 skips it (b7333b58f358), v6.0 no longer retries (VM_FAULT_COMPLETED);
#   * an explicit --policy wins, before or after --kernel; compare columns
#     start from the preset; a workload's own kernel default does not
#     replace the release's value;
#   * x86: 5.13 flushes locally and remotely at once, 6.0 checks new_tlb_gen,
#     6.18 has the lazy mm_cpumask, should_flush_tlb and RCU table freeing;
#   * every preset runs every workload (check instance); unknown: exit 2.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "kernel: FAIL: $*"; fail=1; }

"$bin" check mmap5 --profile falkor-46 --kernel 5.1 --runs 2000 >"$tmp/o" 2>&1
[ $? = 1 ] || failmsg "check mmap5 --kernel 5.1 did not find the 000 bug"
grep -q -- "--kernel 5.1" "$tmp/o" || failmsg "the replay command lacks --kernel 5.1"
# v5.1 is the same preset, printed as 5.1 (the output named it as typed)
a=$("$bin" run mmap8 --iters 2 --threads 2 --kernel v5.1 --json | sed 's/"command":"[^"]*"//')
b=$("$bin" run mmap8 --iters 2 --threads 2 --kernel 5.1 --json | sed 's/"command":"[^"]*"//')
[ -n "$a" ] && [ "$a" = "$b" ] || failmsg "--kernel v5.1 and 5.1 print differently"
"$bin" check mmap5 --profile falkor-46 --kernel 5.2 --runs 2000 >"$tmp/o" 2>&1
[ $? = 0 ] || failmsg "check mmap5 --kernel 5.2 is not clean"

pf() {	# kernel -> "vale1is fault_retries spurious_flushes"
	"$bin" run page_fault3 --kernel "$1" --tasks 2 -w size=256K -D jitter=0 --json |
		python3 -c 'import json,sys; m=json.load(sys.stdin)["metrics"]; print(m["tlbi"]["vale1is"], m["fault_retries"], m["spurious_flushes"])'
}
read -r v58 r58 s58 <<<"$(pf 5.8)"
read -r v59 r59 s59 <<<"$(pf 5.9)"
read -r v60 r60 s60 <<<"$(pf 6.0)"
[ "$r58" -gt 0 ] && [ "$s58" = "$r58" ] || failmsg "5.8: retries $r58, spurious flushes $s58"
[ "$v58" = $((v59 + s58)) ] || failmsg "5.8 VALE1IS $v58 != 5.9's $v59 + $s58 spurious flushes"
[ "$s59" = 0 ] && [ "$r59" -gt 0 ] || failmsg "5.9: retries $r59, spurious flushes $s59"
[ "$r60" = 0 ] || failmsg "6.0 retried $r60 faults"

# explicit --policy wins, in either order; compare columns start from it
for args in "--kernel 5.1 --policy nested=fullmm" "--policy nested=fullmm --kernel 5.1"; do
	"$bin" run mmap8 --iters 5 $args --json | python3 -c '
import json, sys
p = json.load(sys.stdin)["policy"]
want = {"nested": "fullmm", "x86_lazy": "freed_tables", "fault_retry": "none", "vmap_purge": "global"}
sys.exit(0 if all(p[k] == v for k, v in want.items()) else 1)' || failmsg "$args: wrong knobs"
done
"$bin" compare mmap8 --iters 5 --kernel 6.10 --policy kasan_flush=per_node \
	--policy nested=prefix --json | python3 -c '
import json, sys
r = json.load(sys.stdin)["runs"]
ok = r[0]["policy"]["kasan_flush"] == "per_node" and r[0]["policy"]["nested"] == "fullmm" \
     and r[1]["policy"]["kasan_flush"] == "per_area" and r[1]["policy"]["nested"] == "prefix" \
     and r[0]["kernel"] == "6.10"
sys.exit(0 if ok else 1)' || failmsg "compare columns do not start from the preset"

# the x86 behaviours after v5.1 (tests/arch/test_x86_modern.c has their rules)
x86k() {	# kernel -> the five x86 knobs it sets
	"$bin" run mmap8 --iters 2 --threads 2 --kernel "$1" --json | python3 -c '
import json, sys
p = json.load(sys.stdin)["policy"]
print(" ".join(p[k] for k in ["x86_flush_local", "x86_tlb_gen", "x86_cpumask",
                              "x86_should_flush", "x86_table_free"]))'
}
[ "$(x86k 5.10)" = "first mm_gen eager not_lazy page" ] || failmsg "5.10 x86 knobs: $(x86k 5.10)"
[ "$(x86k 5.13)" = "concurrent mm_gen eager not_lazy page" ] || failmsg "5.13 x86 knobs: $(x86k 5.13)"
[ "$(x86k 6.11)" = "concurrent new_gen eager not_lazy page" ] || failmsg "6.11 x86 knobs: $(x86k 6.11)"
[ "$(x86k 6.18)" = "concurrent new_gen lazy loaded_mm rcu" ] || failmsg "6.18 x86 knobs: $(x86k 6.18)"
# x86_flush: invlpgb from v6.15 (4afeb0ed1753); used only where the profile
# has INVLPGB (milan-72): on x86-24 the 6.18 preset still sends IPIs
x86f() {	# kernel profile -> x86_flush, then whether INVLPGBs were issued
	"$bin" run mmap8 --iters 20 --threads 6 --cpus 6 --profile "$2" --kernel "$1" --json |
	python3 -c '
import json, sys
r = json.load(sys.stdin)
print(r["policy"]["x86_flush"], "invlpgb" if r["metrics"].get("invlpgb", 0) else "ipi")'
}
[ "$(x86f 6.11 milan-72)" = "ipi ipi" ] || failmsg "6.11 x86_flush: $(x86f 6.11 milan-72)"
[ "$(x86f 6.18 x86-24)" = "invlpgb ipi" ] || failmsg "6.18 on x86-24: $(x86f 6.18 x86-24)"
[ "$(x86f 6.18 milan-72)" = "invlpgb invlpgb" ] || failmsg "6.18 on milan-72: $(x86f 6.18 milan-72)"

# every preset on every workload (the small check instance): 0 or 1
"$bin" list kernels | awk '/^[0-9]/ {print $1}' >"$tmp/k"
[ "$(wc -l <"$tmp/k")" -ge 12 ] || failmsg "fewer than 12 presets"
for v in 4.14 4.20 5.1 5.2 5.8 5.9 5.10 6.0 6.6 6.10 6.11 6.18; do
	grep -qx "$v" "$tmp/k" || failmsg "no preset $v"
done
"$bin" list workloads | awk '/^[a-z]/ {print $1}' >"$tmp/w"
for k in 5.1 6.18 v4.14; do
	while read -r w; do
		"$bin" check "$w" --kernel "$k" --runs 3 >"$tmp/o" 2>"$tmp/e"
		rc=$?
		[ $rc = 0 ] || [ $rc = 1 ] || failmsg "check $w --kernel $k: exit $rc: $(head -c 200 "$tmp/e")"
	done <"$tmp/w"
done
"$bin" run mmap8 --kernel 5.3 >"$tmp/o" 2>"$tmp/e"
[ $? = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] || failmsg "--kernel 5.3 not refused in one line"

# a scenario's `kernel VERSION` line sets every knob of the preset, as
# --kernel does (the list was cut at 511 bytes: the knobs after it kept
# today's values), and its `policy` line wins over the preset
for k in $("$bin" list kernels | awk '/^[0-9]/ { print $1 }'); do
	printf 'kernel %s\nmain {\n op\n}\n' "$k" >"$tmp/k.tlbs"
	printf 'main {\n op\n}\n' >"$tmp/k0.tlbs"
	a=$("$bin" run "$tmp/k.tlbs" | sed -n 's/^policy: //p')
	b=$("$bin" run "$tmp/k0.tlbs" --kernel "$k" | sed -n 's/^policy: kernel [^:]*: //p')
	[ -n "$a" ] && [ "$a" = "$b" ] || failmsg "scenario 'kernel $k' != --kernel $k: $(diff <(echo "$a" | tr ' ' '\n') <(echo "$b" | tr ' ' '\n') | head -4)"
done
printf 'kernel 4.14\npolicy thp_gup_sync=ipi\nmain {\n op\n}\n' >"$tmp/kp.tlbs"
"$bin" run "$tmp/kp.tlbs" | grep -q "thp_gup_sync=ipi" || failmsg "a policy line after kernel 4.14 lost"

if [ $fail = 0 ]; then
	echo "kernel: PASS"
	exit 0
fi
exit 1
