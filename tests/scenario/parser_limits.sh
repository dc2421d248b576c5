#!/usr/bin/env bash
# parser_limits.sh TLBSIM - generated scenario files at the parser's edges,
# each once a crash or a cascade:
#  - calls nested 3000 deep (load(load(...))) and 40 deep: one error, "nested
#    too deeply", exit 2 (the C stack overflowed: ASan stack-overflow at
#    3000, SIGSEGV at 20000 in the optimised build);
#  - an if with 50 000 `else if` links runs and takes the right branch (the
#    parser recursed per link: SIGSEGV);
#  - one mistake gives one error line: a bad number in a one-line block
#    (sync_line ate its '}', then "expected '}'" at the end of the file), a
#    name too long before '=' (then "expected a value, found '='"), nesting
#    too deep in parentheses (then "expected ')'");
#  - a `\` line continuation works in a CRLF file;
#  - a for variable shadows a local of its name in its loop (the older local
#    was read), and cannot be assigned (`i = 0` made the loop endless);
#  - loops that let no simulated time pass stop with an error after 2^26
#    back-edges (nested 10^9 loops ignored --time-limit and SIGTERM);
#  - a line break in a file's name is \x0a in its messages, which stay one
#    line each (run, test, import strace printed the raw name).
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "parser_limits: FAIL: $*"; fail=1; }
one_error() {	# file, regex
	timeout 60 "$bin" run "$tmp/$1" >"$tmp/o" 2>"$tmp/e"
	local rc=$?
	[ $rc = 2 ] && [ ! -s "$tmp/o" ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -qE "$2" "$tmp/e" ||
		failmsg "$1: exit $rc, stderr: $(head -c 400 "$tmp/e")"
}
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
def w(name, text):
    open(d + "/" + name, "w", newline="").write(text)
w("calls3000.tlbs", "main {\n x = " + "load(" * 3000 + "0" + ")" * 3000 + "\n}\n")
w("calls40.tlbs", "main {\n x = " + "load(" * 40 + "0" + ")" * 40 + "\n}\n")
links = "".join(" else if x == %d { y = %d }" % (i + 1, 10 * (i + 1)) for i in range(50000))
w("elif.tlbs", "main {\n x = 3\n y = 0\n if x == 0 { y = 100 }" + links + " else { y = 7 }\n repeat y { op }\n}\n")
w("badnum.tlbs", "main { x = 9223372036854775808 }\n")
w("longname.tlbs", "main {\n " + "a" * 60 + " = 1\n}\n")
w("parens.tlbs", "main {\n x = " + "(" * 34 + "1" + ")" * 34 + "\n}\n")
w("shadow.tlbs", "main {\n x = 5\n for x in 0..3 {\n  repeat x { op }\n }\n repeat x { op }\n}\n")
w("reset.tlbs", "main {\n for i in 0..2 {\n  i = 0\n }\n}\n")
w("spin.tlbs", "main {\n x = 0\n repeat 1000000000 {\n  repeat 1000000000 {\n   x = 1\n  }\n }\n}\n")
w("crlf.tlbs", "main {\r\n x = 1 + \\\r\n 2\r\n repeat x { op }\r\n}\r\n")
PY
one_error calls3000.tlbs "calls3000.tlbs:2:[0-9]+: expression nested too deeply"
one_error calls40.tlbs "calls40.tlbs:2:[0-9]+: expression nested too deeply"
timeout 120 "$bin" run "$tmp/elif.tlbs" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 0 ] && grep -qE "^ops +30$" "$tmp/o" || failmsg "elif.tlbs: exit $rc, $(grep ops "$tmp/o") $(head -c 300 "$tmp/e")"
one_error badnum.tlbs "badnum.tlbs:1:12: bad number"
one_error longname.tlbs "longname.tlbs:2:2: name too long"
one_error parens.tlbs "parens.tlbs:2:[0-9]+: expression nested too deeply"
timeout 60 "$bin" run "$tmp/crlf.tlbs" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 0 ] && grep -qE "^ops +3$" "$tmp/o" || failmsg "crlf.tlbs: exit $rc, $(head -c 300 "$tmp/e")"
# a for variable shadows a local of its name inside the loop: 0+1+2, then 5
timeout 60 "$bin" run "$tmp/shadow.tlbs" >"$tmp/o" 2>"$tmp/e"
grep -qE "^ops +8$" "$tmp/o" || failmsg "shadow.tlbs: $(grep ops "$tmp/o") $(head -c 300 "$tmp/e")"
# the loop variable cannot be assigned (i = 0 made the loop endless)
one_error reset.tlbs "reset.tlbs:3:3: cannot assign to the loop variable 'i'"
# loops that let no time pass end with an error, in run, check and test
# (10^18 iterations: they spun past --time-limit and SIGTERM)
for cmd in run check; do
	timeout -k 5 30 "$bin" $cmd "$tmp/spin.tlbs" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	[ $rc = 2 ] && grep -q "without simulated time passing" "$tmp/e" ||
		failmsg "$cmd spin.tlbs: exit $rc, $(head -c 300 "$tmp/e")"
done
# a file name with a line break: each message stays one line
nl=$(printf 'p\nq')
printf 'bogus\n' >"$tmp/$nl.tlbs"
timeout 60 "$bin" run "$tmp/$nl.tlbs" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 2 ] && [ "$(grep -c 'p\\x0aq\.tlbs:[12]:1: ' "$tmp/e")" = 2 ] && [ "$(wc -l <"$tmp/e")" = 2 ] ||
	failmsg "run of a name with a line break: exit $rc, $(head -c 300 "$tmp/e")"
timeout 60 "$bin" run "$tmp/$nl.none.tlbs" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q 'p\\x0aq\.none\.tlbs: cannot open' "$tmp/e" ||
	failmsg "run of a missing name with a line break: exit $rc, $(head -c 300 "$tmp/e")"
timeout 60 "$bin" test "$tmp/$nl.tlbs" >"$tmp/o" 2>"$tmp/e"
grep -q 'p\\x0aq\.tlbs:1:1: unknown header item' "$tmp/o" ||
	failmsg "test of a name with a line break: $(head -c 300 "$tmp/o")"
printf 'garbage line\n' >"$tmp/$nl.txt"
timeout 60 "$bin" import strace "$tmp/$nl.txt" -o "$tmp/imp.tlbs" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q 'p\\x0aq\.txt:1: no -tt timestamp' "$tmp/e" ||
	failmsg "import strace of a name with a line break: exit $rc, $(head -c 300 "$tmp/e")"

if [ $fail = 0 ]; then
	echo "parser_limits: PASS"
	exit 0
fi
exit 1
