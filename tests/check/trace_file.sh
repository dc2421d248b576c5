#!/usr/bin/env bash
# trace_file.sh TLBSIM MODE - `tlbsim check --trace FILE`.
#
# MODE ok: for a violation the file is Chrome trace-event JSON
#   (python3 -m json.tool accepts it) with a traceEvents array holding
#   complete slices ("ph":"X"), thread_name metadata for every CPU, at least
#   one flow start ("ph":"s") with a matching finish ("ph":"f"), and the
#   violation as an instant event; otherData.token is the printed token.
#   Only FILE appears in its directory (the temporary file is renamed).
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
    assert float(e["dur"]) > 0, e
names = [e for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"]
cpus = {e["tid"] for e in names}
assert cpus and cpus >= {e["tid"] for e in x}, (cpus, {e["tid"] for e in x})
s = [e for e in ev if e.get("ph") == "s"]
f = [e for e in ev if e.get("ph") == "f"]
assert s, "no flow events"
assert {e["id"] for e in s} == {e["id"] for e in f}, "flow starts without finishes"
assert any(e.get("ph") == "i" and "VIOLATION" in e["name"] for e in ev), "no violation marker"
assert d["otherData"]["token"] == sys.argv[2], (d["otherData"], sys.argv[2])
PY
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
