#!/usr/bin/env bash
# test_runner.sh TLBSIM SCENARIOS_DIR - `tlbsim test`:
#   - a directory with a passing file, a file whose expectation is wrong and
#     a file that does not parse: one line each (ok / FAIL with the clause and
#     the violation / ERROR with FILE:LINE:COL), "1 passed, 2 failed", exit 1,
#     and JUnit XML with one failure and one error;
#   - -j 2 and -j 8 print the same lines in the same order, exit the same
#     and write the same JUnit XML (times aside);
#   - a wrong `expect violation` (nothing found) is a FAIL too;
#   - -v adds a line per clause: the invariant found or nothing, schedules,
#     host seconds;
#   - usage errors exit 2 with one line on stderr;
#   - symbolic links to directories inside a PATH are not followed (two
#     links back up made the walk exponential: 2^32 visits), a link to a
#     file is a file, and a PATH that is a link to a directory is walked;
#   - a FIFO as PATH is an error; the JUnit XML is well-formed for file
#     names cut inside a UTF-8 character or not in UTF-8;
#   - files 40 directories deep and under hidden directories (.ci/) are
#     checked, as find(1) lists them (a silent depth limit of 32 and the
#     skip of dot entries left them unchecked and the run passed); nesting
#     past 256 is one error line naming the directory.
# Prints "test_runner: PASS" or "test_runner: FAIL: ..." lines.
set -u
bin=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "test_runner: FAIL: $*"; fail=1; }
mkdir -p "$tmp/d/sub"
cp "$dir/lazy_tables.tlbs" "$tmp/d/a_good.tlbs"
sed 's/^expect violation I1 with x86_lazy=never$/expect clean with x86_lazy=never/' \
	"$dir/lazy_tables.tlbs" >"$tmp/d/sub/b_wrong.tlbs"
printf 'main {\n    spawn\n}\n' >"$tmp/d/c_broken.tlbs"
echo "not a scenario" >"$tmp/d/ignored.txt"
"$bin" test "$tmp/d" --time-limit 1 --junit "$tmp/j.xml" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
[ $rc = 1 ] || bad "exit $rc, want 1"
[ "$(wc -l <"$tmp/out")" = 4 ] || bad "want 3 file lines and a summary"
grep -q "^ok    $tmp/d/a_good.tlbs (2 expectations)$" "$tmp/out" || bad "no ok line"
grep -q "^FAIL  $tmp/d/sub/b_wrong.tlbs:[0-9]*: expect clean with x86_lazy=never: found I1" \
	"$tmp/out" || bad "no FAIL line naming the clause and the violation"
grep -q "^ERROR $tmp/d/c_broken.tlbs:2:10: expected a thread name, found end of line$" \
	"$tmp/out" || bad "no ERROR line with FILE:LINE:COL"
tail -1 "$tmp/out" | grep -q "^1 passed, 2 failed$" || bad "summary"
[ -s "$tmp/err" ] && bad "stderr not empty: $(cat "$tmp/err")"
python3 - "$tmp/j.xml" <<'PY' || bad "JUnit XML"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
assert s.get("tests") == "3" and s.get("failures") == "1" and s.get("errors") == "1", s.attrib
cases = s.findall("testcase")
assert [c.find("failure") is not None for c in cases] == [False, False, True], "failure"
assert [c.find("error") is not None for c in cases] == [False, True, False], "error"
PY
# -j: the same lines in the same (file) order, the same exit status, the
# same JUnit XML; -j larger than the number of files too
for j in 2 8; do
	# -j 2 as two words, -j8 as one
	jopt="-j $j"; [ $j = 8 ] && jopt=-j8
	"$bin" test "$tmp/d" --time-limit 1 $jopt --junit "$tmp/j$j.xml" >"$tmp/outj" 2>"$tmp/errj"
	rc=$?
	[ $rc = 1 ] || bad "-j $j: exit $rc, want 1"
	cmp -s "$tmp/out" "$tmp/outj" || bad "-j $j: other lines: $(cat "$tmp/outj")"
	[ -s "$tmp/errj" ] && bad "-j $j: stderr not empty: $(cat "$tmp/errj")"
	sed 's/time="[0-9.]*"//g' "$tmp/j.xml" >"$tmp/jx1"
	sed 's/time="[0-9.]*"//g' "$tmp/j$j.xml" >"$tmp/jx2"
	cmp -s "$tmp/jx1" "$tmp/jx2" || bad "-j $j: other JUnit XML"
done
# a violation expected and not found
sed 's/^expect clean$/expect violation I2/' "$dir/lazy_tables.tlbs" >"$tmp/none.tlbs"
"$bin" test "$tmp/none.tlbs" --time-limit 1 >"$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "^FAIL  .*expect violation I2: nothing found" "$tmp/out" ||
	bad "a missing violation: exit $rc: $(cat "$tmp/out")"
# --verbose: a line per clause under its file, with what was found and after
# how many schedules (lazy_tables: clean, then I1 with x86_lazy=never)
"$bin" test -v "$tmp/d/a_good.tlbs" --time-limit 1 >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc = 0 ] && [ "$(wc -l <"$tmp/out")" = 4 ] || bad "-v: exit $rc, want 0 and 4 lines"
sed -n 2p "$tmp/out" | grep -Eq "^      expect clean: nothing in [1-9][0-9]* schedule\(s\), [0-9.]+ s$" ||
	bad "-v: no line for the clean clause"
sed -n 3p "$tmp/out" | grep -Eq "^      expect violation I1 with x86_lazy=never: I1 after [1-9][0-9]* schedule\(s\), [0-9.]+ s$" ||
	bad "-v: no line for the violation clause"
# a file without expect clauses (its implicit `expect clean`, no line) whose
# tasks all wait forever: ERROR naming the file (not FILE:0) and each wait
mkdir -p "$tmp/dl"
printf 'main {\n spawn t\n join all\n}\nthread t {\n wait go\n}\n' >"$tmp/dl/dead.tlbs"
"$bin" test "$tmp/dl/dead.tlbs" --time-limit 1 >"$tmp/outd" 2>&1
rc=$?
[ $rc = 1 ] || bad "deadlock: exit $rc, want 1"
grep -q "^ERROR $tmp/dl/dead.tlbs: expect clean: deadlock: 2 simulated threads asleep forever: t at $tmp/dl/dead.tlbs:6:2 (wait go), main at $tmp/dl/dead.tlbs:3:2 (join all)$" \
	"$tmp/outd" || bad "deadlock line: $(cat "$tmp/outd")"
# usage
for args in "" "$tmp/nosuch" "--time-limit 0 $dir" "--bogus $dir" "$tmp/d/ignored.txt/" \
	"-j 0 $dir" "--jobs x $dir" "-j 1025 $dir" "$dir -j" "-j0 $dir" "--jobs= $dir"; do
	"$bin" test $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] ||
		bad "test $args: exit $rc, want 2 and one line on stderr"
done
mkdir "$tmp/empty"
"$bin" test "$tmp/empty" >/dev/null 2>&1
[ $? = 2 ] || bad "a directory with no scenario files"
# links: two back up (a loop each), one to a sibling directory, one to a file
mkdir -p "$tmp/ln/sub" "$tmp/ln/other"
cp "$dir/lazy_tables.tlbs" "$tmp/ln/sub/a.tlbs"
ln -s .. "$tmp/ln/sub/up1"
ln -s ../.. "$tmp/ln/sub/up2"
ln -s ../sub "$tmp/ln/other/side"
ln -s ../sub/a.tlbs "$tmp/ln/other/b.tlbs"
ln -s "$tmp/ln/sub" "$tmp/sublink"
timeout 60 "$bin" test "$tmp/ln" --time-limit 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && [ "$(grep -c '^ok ' "$tmp/out")" = 2 ] && grep -q "^ok    $tmp/ln/other/b.tlbs " "$tmp/out" &&
	grep -q "^ok    $tmp/ln/sub/a.tlbs " "$tmp/out" || bad "links: exit $rc, $(head -c 300 "$tmp/out")"
"$bin" test "$tmp/sublink" --time-limit 1 >"$tmp/out" 2>"$tmp/err"
[ $? = 0 ] && grep -q "^ok    $tmp/sublink/a.tlbs " "$tmp/out" || bad "a PATH that is a link: $(head -c 300 "$tmp/out")"
# a FIFO named as a PATH is refused (its open waited for a writer for ever,
# deaf to SIGINT and SIGTERM)
mkfifo "$tmp/fifo.tlbs"
timeout -s KILL 20 "$bin" test "$tmp/fifo.tlbs" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "not a regular file" "$tmp/err" ||
	bad "a FIFO: exit $rc, $(head -c 300 "$tmp/err")"
# JUnit XML stays well-formed for any file name: one cut inside a UTF-8
# character (the message's place is cut at 300 bytes) and one not in UTF-8
long="$tmp/u/a$(printf '\xc3\xa9%.0s' $(seq 120))/$(printf '\xc3\xa9%.0s' $(seq 30))"
mkdir -p "$long" "$tmp/u/x$(printf '\xff\xfe')"
printf 'main {\n    x = 1 / 0\n}\n' >"$long/f.tlbs"
printf 'main {\n    spawn\n}\n' >"$tmp/u/x$(printf '\xff\xfe')/g.tlbs"
"$bin" test "$tmp/u" --time-limit 1 --junit "$tmp/ju.xml" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || bad "odd names: exit $rc, $(head -c 300 "$tmp/err")"
python3 - "$tmp/ju.xml" <<'PY' || bad "odd names: the JUnit XML is not well-formed"
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
if len(r.findall(".//error")) != 2:
    print("test_runner: FAIL: odd names: %d errors in the XML" % len(r.findall(".//error")))
    sys.exit(1)
PY
# deep and hidden: a broken file in each must be found
d="$tmp/deep"
for i in $(seq 40); do d=$d/d; done
mkdir -p "$d" "$tmp/deep/.ci"
printf 'main {\n    spawn\n}\n' >"$d/z.tlbs"
printf 'main {\n    spawn\n}\n' >"$tmp/deep/.ci/y.tlbs"
printf 'main {\n    spawn\n}\n' >"$tmp/deep/.x.tlbs"
"$bin" test "$tmp/deep" --time-limit 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] && [ "$(grep -c '^ERROR ' "$tmp/out")" = 3 ] ||
	bad "deep and hidden files: exit $rc, $(head -c 300 "$tmp/out")"
d="$tmp/deeper"
for i in $(seq 260); do d=$d/d; done
mkdir -p "$d"
"$bin" test "$tmp/deeper" --time-limit 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "/d: directories nested more than 256 deep" "$tmp/err" ||
	bad "directories 260 deep: exit $rc, $(head -c 300 "$tmp/err")"
[ $fail = 0 ] && echo "test_runner: PASS" || echo "test_runner: FAIL"
