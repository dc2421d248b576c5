#!/usr/bin/env bash
# bad_input.sh TLBSIM DIR - malformed scenario files (DIR/*.tlbs, expected
# messages in DIR/EXPECTED as "FILE<TAB>REGEX" lines). For each file and
# each of run, compare, check: exit status 2, nothing on stdout (nothing ran),
# every stderr line is "FILE:LINE:COL: message" (or the cap's "FILE: too
# many errors, giving up"), at most 10 errors, and every expected message is
# there. `tlbsim test FILE` reports it as ERROR with exit status 1.
# Prints "bad_input: PASS" or "bad_input: FAIL: ..." lines.
set -u
bin=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
for f in "$dir"/*.tlbs; do
	base=$(basename "$f")
	for cmd in run compare check; do
		extra=()
		[ $cmd = compare ] && extra=(--policy nested=v2 --policy nested=fullmm)
		"$bin" $cmd "$f" "${extra[@]}" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		n=$((n + 1))
		if [ $rc != 2 ]; then
			echo "bad_input: FAIL: $cmd $base: exit $rc, want 2"; fail=1
		fi
		if [ -s "$tmp/out" ]; then
			echo "bad_input: FAIL: $cmd $base: something on stdout:"; cat "$tmp/out"; fail=1
		fi
		if [ ! -s "$tmp/err" ]; then
			echo "bad_input: FAIL: $cmd $base: no message on stderr"; fail=1
		fi
		while IFS= read -r line; do
			case $line in
			"$f":[0-9]*:[0-9]*:\ *) ;;
			"$f: too many errors, giving up") ;;
			*) echo "bad_input: FAIL: $cmd $base: not FILE:LINE:COL: '$line'"; fail=1 ;;
			esac
		done <"$tmp/err"
		nerr=$(grep -c "^$f:[0-9]*:[0-9]*: " "$tmp/err")
		if [ "$nerr" -gt 10 ]; then
			echo "bad_input: FAIL: $cmd $base: $nerr errors, over the cap of 10"; fail=1
		fi
		while IFS=$'\t' read -r file re; do
			[ "$file" = "$base" ] || continue
			if ! grep -qE "^$dir/$re" "$tmp/err"; then
				echo "bad_input: FAIL: $cmd $base: no line matching '$re' in:"
				cat "$tmp/err"; fail=1
			fi
		done <"$dir/EXPECTED"
	done
	"$bin" test "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc != 1 ] || ! grep -q "^ERROR $f:[0-9]*:[0-9]*: " "$tmp/out" ||
	   ! grep -q "^0 passed, 1 failed$" "$tmp/out"; then
		echo "bad_input: FAIL: test $base: exit $rc, want 1 with an ERROR line:"
		cat "$tmp/out" "$tmp/err"; fail=1
	fi
done
# the expected messages name files that exist
while IFS=$'\t' read -r file re; do
	[ -f "$dir/$file" ] || { echo "bad_input: FAIL: EXPECTED names $file: no such file"; fail=1; }
done <"$dir/EXPECTED"
# a file that cannot be read
"$bin" run "$tmp/none.tlbs" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc != 2 ] || ! grep -q "none.tlbs: cannot open" "$tmp/err"; then
	echo "bad_input: FAIL: a missing file: exit $rc"; cat "$tmp/err"; fail=1
fi
# a scenario file never runs on the host (native runs built-in C programs)
"$bin" native "$dir/../../../scenarios/mmap8.tlbs" --iters 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc != 2 ] || [ -s "$tmp/out" ] || ! grep -q "runs only in the model" "$tmp/err"; then
	echo "bad_input: FAIL: native FILE: exit $rc"; cat "$tmp/out" "$tmp/err"; fail=1
fi
echo "bad_input: $n command runs"
[ $fail = 0 ] && echo "bad_input: PASS" || echo "bad_input: FAIL"
