#!/usr/bin/env bash
# check_expect.sh - run a `tlbsim check` command whose results go to stdout
# (exit 0: no violation, exit 1: violation found) and check its output.
#
#   check_expect.sh CODE [--has TEXT]... [--re REGEX]... [--lacks TEXT]... -- COMMAND [ARGS...]
#
# Checks (conventions.md "CLI", docs/output.md): the exit status is CODE;
# stderr is empty (results go to stdout, nothing is a diagnostic); stdout
# contains every --has TEXT (fixed string), matches every --re REGEX (grep -E)
# and contains no --lacks TEXT. Prints "check_expect: PASS" or
# "check_expect: FAIL: reason" lines.
set -u
want=$1
shift
has=() res=() lacks=()
while [ $# -gt 0 ]; do
	case $1 in
	--has) has+=("$2"); shift 2 ;;
	--re) res+=("$2"); shift 2 ;;
	--lacks) lacks+=("$2"); shift 2 ;;
	--) shift; break ;;
	*) echo "check_expect: FAIL: bad usage at '$1'"; exit 1 ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$@" >"$tmp/out" 2>"$tmp/err"
rc=$?
echo "--- command: $*"
echo "--- exit status: $rc"
echo "--- stdout:"; cat "$tmp/out"
echo "--- stderr:"; cat "$tmp/err"
fail=0
failmsg() { echo "check_expect: FAIL: $*"; fail=1; }
[ "$rc" = "$want" ] || failmsg "exit status $rc, want $want"
[ -s "$tmp/err" ] && failmsg "stderr not empty"
[ -s "$tmp/out" ] || failmsg "stdout empty"
for s in ${has[@]+"${has[@]}"}; do
	grep -Fq -- "$s" "$tmp/out" || failmsg "stdout lacks '$s'"
done
for re in ${res[@]+"${res[@]}"}; do
	grep -Eq -- "$re" "$tmp/out" || failmsg "stdout does not match /$re/"
done
for s in ${lacks[@]+"${lacks[@]}"}; do
	grep -Fq -- "$s" "$tmp/out" && failmsg "stdout contains '$s'"
done
if [ $fail = 0 ]; then
	echo "check_expect: PASS"
	exit 0
fi
exit 1
