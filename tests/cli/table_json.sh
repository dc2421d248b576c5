#!/usr/bin/env bash
# table_json.sh TLBSIM - output details that used to be wrong:
#  - the JSON "command" is the whole command line, however long (it was cut
#    at 1023 bytes, once in the middle of a UTF-8 character), and non-UTF-8 argument bytes are escaped (U+FFFD) so
#    the JSON stays valid;
#  - control characters of the input are escaped on stderr (\x1b), never
#    echoed raw;
#  - compare tables stay aligned when a column label is longer than 20;
#  - the replay line of check uses full option names even when the command
#    abbreviated them (--prof, --pol);
#  - a violation without an address (the speculative-walk I1) reports no
#    address ("va": null), not 0x0;
#  - schedules cut at --max-steps are counted in the summary and the JSON;
#  - check of mmap8 stopped after one schedule frees everything (under the
#    asan preset LeakSanitizer would print on stderr);
#  - run --fail-on-violation exits 1 when a run saw a violation.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "table_json: FAIL: $*"; fail=1; }

args=(run mmap8 --iters 2 --threads 2 --json)
for i in $(seq 1 200); do args+=(--seed 1); done
"$bin" "${args[@]}" >"$tmp/out" 2>"$tmp/err" || failmsg "long command: exit $?"
python3 - "$tmp/out" "tlbsim ${args[*]}" <<'PY' || failmsg "long command: JSON command cut"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["command"]) > 1100, len(d["command"])
assert d["command"] == sys.argv[2], (d["command"][:80], sys.argv[2][:80])
PY
# past the 8 KiB in-struct buffer, with two-byte UTF-8 characters across
# every buffer boundary (1023, 8191): whole and valid
args=(run mmap5 --iters 1 -w loops=1 --json)
e2=$(printf '\xc3\xa9%.0s' $(seq 1 61))
for i in $(seq 1 80); do args+=(--profile "x$e2"); done
args+=(--profile falkor-46)
"$bin" "${args[@]}" >"$tmp/out" 2>"$tmp/err" || failmsg "long UTF-8 command: exit $?"
python3 - "$tmp/out" "tlbsim ${args[*]}" <<'PY' || failmsg "long UTF-8 command: JSON command cut or invalid"
import json, sys
raw = open(sys.argv[1], "rb").read()
d = json.loads(raw.decode("utf-8"))
want = sys.argv[2].encode("utf-8", "surrogateescape").decode("utf-8")
assert len(d["command"].encode()) > 9000, len(d["command"].encode())
assert d["command"] == want, (len(d["command"]), len(want))
PY
"$bin" run mmap8 --iters 2 --threads 2 --profile $'\xff\xfe' --profile falkor-46 --json \
	>"$tmp/out" 2>"$tmp/err" || failmsg "non-UTF-8 argv: exit $?"
python3 - "$tmp/out" <<'PY' || failmsg "non-UTF-8 argv: JSON invalid or not escaped"
import json, sys
raw = open(sys.argv[1], "rb").read()
raw.decode("utf-8")          # strict: must be valid UTF-8
d = json.loads(raw)
assert "\ufffd" in d["command"], d["command"]
PY

"$bin" run $'mm\x1bap8' >"$tmp/out" 2>"$tmp/err"
[ "$?" = 2 ] || failmsg "control characters: want exit 2"
grep -q $'\x1b' "$tmp/err" && failmsg "control characters: raw ESC on stderr"
grep -qF 'mm\x1bap8' "$tmp/err" || failmsg "control characters: not escaped as \\x1b"

"$bin" compare mmap8 --iters 2 --threads 2 --policy nested=need_flush_all --policy nested=v2 \
	>"$tmp/out" 2>"$tmp/err" || failmsg "compare: exit $?"
# widths in characters (a cell of several seeds holds a two-byte '±')
python3 -c '
import sys
on = False
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    on = on or line.startswith("metric")
    if on and not line.startswith(("ratio =", "summary:", "±:")):
        print(len(line))' "$tmp/out" | sort -u >"$tmp/widths"
[ "$(wc -l <"$tmp/widths")" = 1 ] || failmsg "compare table rows have different widths: $(tr '\n' ' ' <"$tmp/widths")"

"$bin" check mmap5 --prof falkor-46 --pol nested=prefix --runs 20000 >"$tmp/out" 2>"$tmp/err"
[ "$?" = 1 ] || failmsg "abbreviated check: want exit 1"
grep -q "^replay: tlbsim check mmap5 --profile falkor-46 --policy nested=prefix --replay t2\." \
	"$tmp/out" || failmsg "replay line: $(grep '^replay:' "$tmp/out")"

"$bin" check mmap5 --profile x86-24 -D spec_walks=1 --policy nested=prefix --runs 20000 --json \
	>"$tmp/out" 2>"$tmp/err"
python3 -c "import json,sys; v=json.load(open(sys.argv[1]))['violation']; assert v and v['va'] is None, v" \
	"$tmp/out" || failmsg "speculative-walk I1: va is not null"

"$bin" check mmap8 --max-steps 100 --runs 3 --json >"$tmp/out" 2>"$tmp/err"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['cut_schedules']==3 and d['max_steps']==100, d" \
	"$tmp/out" || failmsg "cut schedules not counted in JSON"
"$bin" check mmap8 --max-steps 100 --runs 3 >"$tmp/out" 2>"$tmp/err"
grep -q "3 schedule(s) were cut at 100 steps" "$tmp/out" || failmsg "cut schedules not reported"

"$bin" check mmap8 --policy nested=prefix --runs 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
{ [ "$rc" = 0 ] || [ "$rc" = 1 ]; } || failmsg "check mmap8 --runs 1: exit $rc"
[ -s "$tmp/err" ] && { cat "$tmp/err"; failmsg "check mmap8 --runs 1: stderr not empty"; }

# run exits 1 with --fail-on-violation when it saw a violation (this run sees
# the lazy-TLB I1 of b956575bed91), 0 without the option; the table is
# printed either way and the note names the first violation
"$bin" run lazy_tables --policy x86_lazy=never --fail-on-violation >"$tmp/out" 2>"$tmp/err"
[ "$?" = 1 ] || failmsg "--fail-on-violation: want exit 1"
grep -q "^violations" "$tmp/out" || failmsg "--fail-on-violation: no table"
grep -q "note: run 1 saw [0-9]* invariant violation" "$tmp/err" || failmsg "--fail-on-violation: no note"
"$bin" run lazy_tables --policy x86_lazy=never >"$tmp/out" 2>"$tmp/err"
[ "$?" = 0 ] || failmsg "without --fail-on-violation: want exit 0"

if [ $fail = 0 ]; then
	echo "table_json: PASS"
	exit 0
fi
exit 1
