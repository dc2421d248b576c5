#!/usr/bin/env bash
# replay_token.sh TLBSIM MODE - replay tokens through the command line.
#
# MODE roundtrip: `tlbsim check mmap5 --profile falkor-46 --policy
#   nested=prefix` exits 1 and prints "replay: tlbsim check ... --replay TOKEN"
#   and "token: TOKEN". Running the printed replay command (with "tlbsim"
#   replaced by the binary under test) must exit 1 and print the identical
#   violation block (the lines between the first line and the "found after"
#   line), the identical trace and the same token and replay command.
# MODE other_policy: the same token given with a different --policy is an
#   input error: exit 2, stdout empty, exactly one line on stderr saying the
#   token was made for a different configuration.
# MODE json: the --json output of the same search names the same token, and
#   replaying that token reproduces the invariant.
set -u
bin=$1
mode=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "replay_token: FAIL: $*"; fail=1; }
args=(check mmap5 --profile falkor-46 --policy nested=prefix --runs 20000 --time-limit 20)
"$bin" "${args[@]}" >"$tmp/out1" 2>"$tmp/err1"
rc=$?
echo "--- first run: exit $rc"; cat "$tmp/out1" "$tmp/err1"
[ "$rc" = 1 ] || { echo "replay_token: FAIL: first run exit $rc, want 1"; exit 1; }
token=$(sed -n 's/^token: //p' "$tmp/out1")
replay=$(sed -n 's/^replay: //p' "$tmp/out1")
case $token in t2.*) ;; *) echo "replay_token: FAIL: no token line"; exit 1 ;; esac
case $replay in
"tlbsim check mmap5 "*"--replay $token") ;;
*) echo "replay_token: FAIL: replay line '$replay' does not end in --replay $token"; exit 1 ;;
esac
block() {	# the violation block: after line 1, before "found after"
	awk 'NR == 1 { next } /^  found after / { exit } { print }' "$1"
}
trace() {	# the trace lines
	awk '/^trace \(step/ { on = 1; next } /^replay: / { on = 0 } on { print }' "$1"
}
case $mode in
roundtrip)
	read -r -a words <<<"$replay"
	[ "${words[0]}" = tlbsim ] || failmsg "replay command does not start with tlbsim"
	"$bin" "${words[@]:1}" >"$tmp/out2" 2>"$tmp/err2"
	rc=$?
	echo "--- replay: exit $rc"; cat "$tmp/out2" "$tmp/err2"
	[ "$rc" = 1 ] || failmsg "replay exit $rc, want 1"
	[ -s "$tmp/err2" ] && failmsg "replay wrote to stderr"
	block "$tmp/out1" >"$tmp/b1"
	block "$tmp/out2" >"$tmp/b2"
	[ -s "$tmp/b1" ] || failmsg "empty violation block"
	head -n 1 "$tmp/b1" | grep -q '^VIOLATION I1: ' || failmsg "block does not start with VIOLATION I1"
	diff "$tmp/b1" "$tmp/b2" || failmsg "violation blocks differ"
	trace "$tmp/out1" >"$tmp/t1"
	trace "$tmp/out2" >"$tmp/t2"
	[ -s "$tmp/t1" ] || failmsg "empty trace"
	diff "$tmp/t1" "$tmp/t2" || failmsg "traces differ"
	[ "$(sed -n 's/^token: //p' "$tmp/out2")" = "$token" ] || failmsg "replay printed another token"
	[ "$(sed -n 's/^replay: //p' "$tmp/out2")" = "$replay" ] || failmsg "replay printed another replay command"
	grep -q '^  found after 1 schedule' "$tmp/out2" || failmsg "replay ran more than one schedule"
	;;
other_policy)
	"$bin" check mmap5 --profile falkor-46 --policy nested=v2 --replay "$token" >"$tmp/out2" 2>"$tmp/err2"
	rc=$?
	echo "--- replay with nested=v2: exit $rc"; cat "$tmp/out2" "$tmp/err2"
	[ "$rc" = 2 ] || failmsg "exit $rc, want 2"
	[ -s "$tmp/out2" ] && failmsg "stdout not empty"
	[ "$(awk 'END { print NR }' "$tmp/err2")" = 1 ] || failmsg "stderr is not exactly one line"
	grep -q 'different configuration' "$tmp/err2" || failmsg "stderr does not name the problem"
	# the token itself is fine: with the right policy it replays
	"$bin" check mmap5 --profile falkor-46 --policy nested=prefix --replay "$token" >/dev/null 2>&1
	rc=$?
	[ "$rc" = 1 ] || failmsg "replay with the original policy: exit $rc, want 1"
	;;
json)
	"$bin" "${args[@]}" --json >"$tmp/j" 2>"$tmp/err2"
	rc=$?
	echo "--- --json: exit $rc"; cat "$tmp/j" "$tmp/err2"
	[ "$rc" = 1 ] || failmsg "--json exit $rc, want 1"
	python3 - "$tmp/j" "$token" <<'PY' || failmsg "JSON check failed"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["violation"]
assert v["invariant"] == "I1", v["invariant"]
assert v["token"] == sys.argv[2], (v["token"], sys.argv[2])
assert v["replay"].endswith("--replay " + v["token"]), v["replay"]
assert "--json" not in v["replay"]
assert isinstance(v["trace"], list) and len(v["trace"]) > 0
for e in v["trace"]:
    assert {"step", "time_ns", "cpu", "thread", "event"} <= set(e), e
assert any(e["event"].startswith("tlbsim_VIOLATION: I1") for e in v["trace"])
assert "walk-cache" in v["entry"], v["entry"]
assert isinstance(v["cpu"], int) and isinstance(v["frame"], int)
assert v["va"].startswith("0x")
assert d["workload"] == "mmap5" and d["profile"] == "falkor-46"
assert d["policy"]["nested"] == "prefix"
PY
	"$bin" check mmap5 --profile falkor-46 --policy nested=prefix --json --replay "$token" >"$tmp/j2" 2>&1
	rc=$?
	[ "$rc" = 1 ] || failmsg "--json replay exit $rc, want 1"
	python3 - "$tmp/j" "$tmp/j2" <<'PY' || failmsg "replayed JSON differs"
import json, sys
a = json.load(open(sys.argv[1]))["violation"]
b = json.load(open(sys.argv[2]))["violation"]
for k in ("invariant", "cpu", "va", "frame", "text", "entry", "flush", "token", "trace"):
    assert a[k] == b[k], k
PY
	# no violation: "violation": null, exit 0
	"$bin" check mmap5 --profile falkor-46 --policy nested=fullmm --runs 200 --json >"$tmp/j3" 2>"$tmp/err3"
	rc=$?
	[ "$rc" = 0 ] || failmsg "--json clean run exit $rc, want 0"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["violation"] is None; assert d["schedules"] == 200' "$tmp/j3" ||
		failmsg "clean JSON wrong"
	;;
*)
	failmsg "unknown mode $mode"
	;;
esac
if [ $fail = 0 ]; then
	echo "replay_token: PASS"
	exit 0
fi
exit 1
