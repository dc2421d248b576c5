#!/usr/bin/env bash
# reclaim_check.sh TLBSIM SCENDIR CASE - `tlbsim check` finds the violation
# of one historical reclaim ordering (src/mm/rmap.c) within 60 s of search,
# minimises it, and the printed replay command reproduces the same
# violation block in one schedule; the current ordering of the same
# scenario is clean within a bounded search.
# CASE: mprotect | munmap | dontneed | flag | arm64_dsb | lazyfree
set -u
bin=$1
dir=$2
case=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "reclaim_check: FAIL: $*"; fail=1; }
case $case in
mprotect) file=reclaim_race.tlbs inv=I2 bad=(--policy ubc_check_mprotect=off) ;;
munmap) file=reclaim_race.tlbs inv=I2 bad=(--policy ubc_check_zap=off -w race=1) ;;
dontneed) file=reclaim_race.tlbs inv=I2 bad=(--policy ubc_check_zap=off -w race=2) ;;
flag) file=reclaim_flag.tlbs inv=I2 bad=(--policy ubc_flag=bool) ;;
arm64_dsb) file=reclaim_race_arm64.tlbs inv=I2 bad=(--policy arm64_batch=dsb) ;;
lazyfree) file=reclaim_lazyfree.tlbs inv=I3 bad=(--policy nested_check=off) ;;
*) echo "reclaim_check: FAIL: unknown case $case"; exit 1 ;;
esac
good=("${bad[@]}")
good[1]=${bad[1]%%=*}=$(case $case in
	flag) echo gen ;; arm64_dsb) echo flush_mm ;; lazyfree) echo on ;; *) echo on ;; esac)
"$bin" check "$dir/$file" "${bad[@]}" --time-limit 60 >"$tmp/out1" 2>"$tmp/err1"
rc=$?
echo "--- $file ${bad[*]}: exit $rc"
sed -n '1,12p' "$tmp/out1"; cat "$tmp/err1"
[ "$rc" = 1 ] || failmsg "exit $rc, want 1"
grep -q "^VIOLATION $inv: " "$tmp/out1" || failmsg "no VIOLATION $inv"
grep -q "schedule minimised to" "$tmp/out1" || failmsg "not minimised"
replay=$(sed -n 's/^replay: //p' "$tmp/out1")
read -r -a words <<<"$replay"
[ "${words[0]:-}" = tlbsim ] || failmsg "no replay command"
"$bin" "${words[@]:1}" >"$tmp/out2" 2>"$tmp/err2"
rc=$?
echo "--- replay: exit $rc"
[ "$rc" = 1 ] || failmsg "replay exit $rc, want 1"
block() { awk 'NR == 1 { next } /^  found after / { exit } { print }' "$1"; }
block "$tmp/out1" >"$tmp/b1"
block "$tmp/out2" >"$tmp/b2"
diff "$tmp/b1" "$tmp/b2" || failmsg "replayed violation differs"
grep -q '^  found after 1 schedule' "$tmp/out2" || failmsg "replay ran more than one schedule"
"$bin" check "$dir/$file" "${good[@]}" --runs 3000 --time-limit 30 >"$tmp/out3" 2>&1
rc=$?
echo "--- ${good[*]}: exit $rc"; sed -n 2p "$tmp/out3"
[ "$rc" = 0 ] || failmsg "current ordering (${good[*]}): exit $rc, want 0"
[ $fail = 0 ] && echo "reclaim_check: PASS"
exit $fail
