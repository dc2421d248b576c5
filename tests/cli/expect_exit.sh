#!/usr/bin/env bash
# expect_exit.sh - run a command and check its exit status and output.
#
#   expect_exit.sh CODE [--stdout REGEX]... [--stderr REGEX]... -- COMMAND [ARGS...]
#
# Checks (main.c / conventions.md: results to stdout, diagnostics to stderr;
# exit 0 ok, 2 usage or input error with one line naming the problem):
#   - the exit status is CODE;
#   - CODE != 0: stdout is empty and stderr is exactly one line;
#   - CODE == 0: stderr is empty;
#   - every --stdout / --stderr extended regex matches its stream (grep -E).
# Prints the command's stdout and stderr, then "expect_exit: PASS" or
# "expect_exit: FAIL: reason" lines; exits 0 on success, 1 on failure.
set -u
want=$1
shift
out_res=()
err_res=()
while [ $# -gt 0 ]; do
	case $1 in
	--stdout) out_res+=("$2"); shift 2 ;;
	--stderr) err_res+=("$2"); shift 2 ;;
	--) shift; break ;;
	*) echo "expect_exit: FAIL: bad usage at '$1'" >&2; exit 1 ;;
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
failmsg() { echo "expect_exit: FAIL: $*"; fail=1; }
[ "$rc" = "$want" ] || failmsg "exit status $rc, want $want"
# count lines, including a last line without a newline
nlines=$(awk 'END { print NR }' "$tmp/err")
if [ "$want" != 0 ]; then
	[ -s "$tmp/out" ] && failmsg "stdout not empty on error"
	[ "$nlines" = 1 ] || failmsg "stderr has $nlines lines, want exactly 1"
else
	[ -s "$tmp/err" ] && failmsg "stderr not empty on success"
fi
for re in ${out_res[@]+"${out_res[@]}"}; do
	grep -Eq -- "$re" "$tmp/out" || failmsg "stdout does not match /$re/"
done
for re in ${err_res[@]+"${err_res[@]}"}; do
	grep -Eq -- "$re" "$tmp/err" || failmsg "stderr does not match /$re/"
done
if [ $fail = 0 ]; then
	echo "expect_exit: PASS"
	exit 0
fi
exit 1
