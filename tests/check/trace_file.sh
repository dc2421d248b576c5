#!/usr/bin/env bash
# trace_file.sh TLBSIM MODE - `tlbsim check --trace FILE`.
#
# MODE ok: for a violation the file is Chrome trace-event JSON
#   (python3 -m json.tool accepts it) with a traceEvents array holding
#   complete slices ("ph":"X"), thread_name metadata for every CPU and the
#   violation as an instant event; otherData.token is the printed token;
#   slices nest and flows are paired (trace_check.py). Only FILE appears in
#   its directory (the temporary file is renamed).
# MODE files: where the trace goes. A stale FILE is truncated to a trace
#   with no events when nothing is found; a symlink is written through (the
#   link stays a link); "-" puts the trace on stdout and the report on
#   stderr; /dev/stdout is written in place; a write failure (/dev/full)
#   still prints the report first, then one error line, exit 3.
# MODE long_name: a FILE whose name is NAME_MAX (255) bytes long is written
#   (the temporary name used to be FILE.tmp.PID, too long for the directory),
#   and nothing else is left in its directory; a name of 256 bytes is an
#   input error (exit 2) found before the search.
# MODE error: an uncreatable path (a missing directory, or a path that is a
#   directory) is an input error: exit 2, stdout empty, one line on stderr
#   naming the path, and nothing is left behind.
set -u
bin=$1
mode=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "trace_file: FAIL: $*"; fail=1; }
args=(check mmap5 --profile falkor-46 --policy nested=prefix --runs 20000 --time-limit 20)
expect_input_error() {	# path
	"$bin" "${args[@]}" --trace "$1" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	echo "--- --trace $1: exit $rc"; cat "$tmp/out" "$tmp/err"
	[ "$rc" = 2 ] || failmsg "--trace $1: exit $rc, want 2"
	[ -s "$tmp/out" ] && failmsg "--trace $1: stdout not empty"
	[ "$(awk 'END { print NR }' "$tmp/err")" = 1 ] || failmsg "--trace $1: stderr not one line"
	grep -qF -- "$1" "$tmp/err" || failmsg "--trace $1: stderr does not name the path"
	rm -f "$tmp/out" "$tmp/err"
}
case $mode in
ok)
	mkdir "$tmp/d"
	"$bin" "${args[@]}" --trace "$tmp/d/t.json" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	echo "--- exit $rc"; cat "$tmp/out" "$tmp/err"
	[ "$rc" = 1 ] || failmsg "exit $rc, want 1"
	[ -s "$tmp/err" ] && failmsg "stderr not empty"
	[ -f "$tmp/d/t.json" ] || { echo "trace_file: FAIL: no trace file"; exit 1; }
	[ "$(ls -A "$tmp/d")" = t.json ] || failmsg "extra files next to the trace: $(ls -A "$tmp/d")"
	python3 -m json.tool "$tmp/d/t.json" >/dev/null || failmsg "json.tool rejects the file"
	token=$(sed -n 's/^token: //p' "$tmp/out")
	python3 - "$tmp/d/t.json" "$token" <<'PY' || failmsg "trace content check failed"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
assert isinstance(ev, list) and ev
x = [e for e in ev if e.get("ph") == "X"]
assert x, "no complete slices"
for e in x:
    assert {"name", "pid", "tid", "ts", "dur"} <= set(e), e
    assert float(e["dur"]) >= 0, e
names = [e for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"]
cpus = {e["tid"] for e in names}
assert cpus and cpus >= {e["tid"] for e in x}, (cpus, {e["tid"] for e in x})
assert any(e.get("ph") == "i" and "VIOLATION" in e["name"] for e in ev), "no violation marker"
assert d["otherData"]["token"] == sys.argv[2], (d["otherData"], sys.argv[2])
PY
	python3 "$(dirname "$0")/trace_check.py" "$tmp/d/t.json" || failmsg "trace_check"
	;;
files)
	clean=(check mmap5 --profile falkor-46 --policy nested=fullmm --runs 5)
	# a stale counterexample does not survive a clean run
	echo stale >"$tmp/stale.json"
	"$bin" "${clean[@]}" --trace "$tmp/stale.json" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 0 ] || failmsg "clean run with a stale trace: exit $rc"
	python3 - "$tmp/stale.json" <<'PY' || failmsg "stale file not truncated to an empty trace"
import json, sys
d = json.load(open(sys.argv[1]))
assert not [e for e in d["traceEvents"] if e.get("ph") != "M"], "events left"
assert d["otherData"]["token"] is None
PY
	# a symlink is written through
	mkdir "$tmp/real"
	ln -s "$tmp/real/t.json" "$tmp/link.json"
	"$bin" "${args[@]}" --trace "$tmp/link.json" >"$tmp/out" 2>"$tmp/err"
	[ -L "$tmp/link.json" ] || failmsg "the symlink was replaced"
	[ -s "$tmp/real/t.json" ] || failmsg "the symlink's target was not written"
	python3 "$(dirname "$0")/trace_check.py" "$tmp/real/t.json" || failmsg "trace_check (symlink)"
	# - : trace on stdout, report on stderr
	"$bin" "${args[@]}" --trace - >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 1 ] || failmsg "--trace -: exit $rc, want 1"
	[ -e ./- ] && failmsg "--trace - created a file named -"
	python3 "$(dirname "$0")/trace_check.py" "$tmp/out" || failmsg "--trace -: stdout is not a trace"
	grep -q "^VIOLATION" "$tmp/err" || failmsg "--trace -: the report is not on stderr"
	# /dev/stdout: written in place, never renamed over
	"$bin" "${args[@]}" --trace /dev/stdout >"$tmp/out2" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 1 ] || failmsg "--trace /dev/stdout: exit $rc, want 1"
	[ -c /dev/stdout ] || [ -L /dev/stdout ] || failmsg "/dev/stdout was replaced"
	grep -q '"traceEvents"' "$tmp/out2" || failmsg "--trace /dev/stdout: no trace in the output"
	# a failing write: the report comes first, then one error line, exit 3
	if [ -w /dev/full ]; then
		"$bin" "${args[@]}" --trace /dev/full >"$tmp/out" 2>"$tmp/err"
		rc=$?
		[ "$rc" = 3 ] || failmsg "--trace /dev/full: exit $rc, want 3"
		grep -q "^VIOLATION" "$tmp/out" || failmsg "--trace /dev/full: the report was lost"
		[ "$(awk 'END { print NR }' "$tmp/err")" = 1 ] || failmsg "--trace /dev/full: stderr not one line"
	fi
	# --trace - together with --json: both want stdout
	"$bin" "${args[@]}" --json --trace - >"$tmp/out" 2>"$tmp/err"
	[ "$?" = 2 ] || failmsg "--json --trace -: want exit 2"
	# and with --csv (the CSV went to stderr without a word)
	"$bin" "${args[@]}" --csv --trace - >"$tmp/out" 2>"$tmp/err"
	[ "$?" = 2 ] && grep -q "trace - and --csv both want stdout" "$tmp/err" ||
		failmsg "--csv --trace -: want exit 2, $(head -c 200 "$tmp/err")"
	;;
long_name)
	mkdir "$tmp/d"
	name=$(printf 'a%.0s' $(seq 1 250)).json
	"$bin" "${args[@]}" --trace "$tmp/d/$name" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	echo "--- exit $rc"; cat "$tmp/err"
	[ "$rc" = 1 ] || failmsg "exit $rc, want 1"
	[ -s "$tmp/err" ] && failmsg "stderr not empty"
	[ "$(ls -A "$tmp/d")" = "$name" ] || failmsg "directory holds: $(ls -A "$tmp/d")"
	python3 "$(dirname "$0")/trace_check.py" "$tmp/d/$name" || failmsg "trace_check"
	# one byte past NAME_MAX: bad input, found before the search (it used
	# to fail after it, exit 3), nothing left behind
	rm -f "$tmp/d/$name"
	expect_input_error "$tmp/d/a$name"
	[ -z "$(ls -A "$tmp/d")" ] || failmsg "left behind: $(ls -A "$tmp/d")"
	;;
error)
	expect_input_error "/nonexistent/dir/x.json"
	[ -e /nonexistent ] && failmsg "/nonexistent was created"
	mkdir "$tmp/d"
	expect_input_error "$tmp/d/missing/x.json"
	[ -z "$(ls -A "$tmp/d")" ] || failmsg "left behind: $(ls -A "$tmp/d")"
	# a path that is a directory: the temporary file must not survive
	mkdir "$tmp/d/isdir"
	expect_input_error "$tmp/d/isdir"
	[ "$(ls -A "$tmp/d")" = isdir ] || failmsg "left behind: $(ls -A "$tmp/d")"
	[ -z "$(ls -A "$tmp/d/isdir")" ] || failmsg "wrote into the directory"
	;;
*)
	failmsg "unknown mode $mode"
	;;
esac
if [ $fail = 0 ]; then
	echo "trace_file: PASS"
	exit 0
fi
exit 1
