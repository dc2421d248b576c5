#!/usr/bin/env bash
# replay_overrides.sh TLBSIM SCENARIOS - the printed replay command of a
# violation found under options that override a default replays it (exit
# 1, not "the token was made for a different configuration", exit 2):
#   * --kernel with a --policy that sets a knob back to the workload's
#     default (the preset would change it: 5.8 sets tlb_flush_cond=bits); the
#     knobs the preset itself sets are not repeated as --policy;
#   * --memory-model sc on a file whose header says memory_model tso;
# and a token made on a scenario file is refused on an edited copy (its hash
# names the file's text); a BOM is skipped, a NUL byte is one error.
set -u
bin=$1
sc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "replay_overrides: FAIL: $*"; fail=1; }

# the printed replay command, run with the binary under test: its exit status
replay() {	# out-file
	local r
	r=$(sed -n 's/^replay: tlbsim //p' "$1")
	[ -n "$r" ] || { echo "no replay line"; return 9; }
	eval "\"$bin\" $r" >"$1.replay" 2>&1
}

cp "$sc/examples/zap_while_writing.tlbs" "$tmp/z.tlbs"
"$bin" check "$tmp/z.tlbs" --kernel 5.8 --policy nested_check=off,tlb_flush_cond=end >"$tmp/k" 2>&1
rc=$?
[ $rc = 1 ] || failmsg "--kernel 5.8 search: exit $rc, want 1"
grep -q "^replay: .*--policy tlb_flush_cond=end" "$tmp/k" ||
	failmsg "the replay command lacks tlb_flush_cond=end: $(grep '^replay:' "$tmp/k")"
n=$(grep '^replay:' "$tmp/k" | grep -o -- "--policy" | wc -l)
[ "$n" = 2 ] || failmsg "the replay command has $n --policy options, want the 2 given"
replay "$tmp/k"
rc=$?
[ $rc = 1 ] || failmsg "--kernel replay: exit $rc, $(head -c 300 "$tmp/k.replay")"

{ echo "memory_model tso"; cat "$tmp/z.tlbs"; } >"$tmp/t.tlbs"
"$bin" check "$tmp/t.tlbs" --memory-model sc --policy nested_check=off >"$tmp/m" 2>&1
rc=$?
[ $rc = 1 ] || failmsg "--memory-model sc search: exit $rc, want 1"
grep -q "^replay: .*--memory-model sc" "$tmp/m" ||
	failmsg "the replay command lacks --memory-model sc: $(grep '^replay:' "$tmp/m")"
replay "$tmp/m"
rc=$?
[ $rc = 1 ] || failmsg "--memory-model sc replay: exit $rc, $(head -c 300 "$tmp/m.replay")"

# a token names the scenario file's text: replayed on an edited copy it is
# refused (it replayed there, to another outcome, exit 0)
"$bin" check "$tmp/z.tlbs" --policy nested_check=off >"$tmp/s" 2>&1
[ $? = 1 ] || failmsg "zap_while_writing with nested_check=off: no violation"
tok=$(sed -n 's/^token: //p' "$tmp/s")
printf '\nvar edited\n' >>"$tmp/z.tlbs"
"$bin" check "$tmp/z.tlbs" --policy nested_check=off --replay "$tok" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 2 ] && grep -q "or the scenario file's text" "$tmp/e" ||
	failmsg "a token replayed on an edited file: exit $rc, $(head -c 200 "$tmp/e")"
# a byte order mark is not text; a NUL byte is one error, not a cascade
printf '\xef\xbb\xbf' | cat - "$sc/examples/zap_while_writing.tlbs" >"$tmp/bom.tlbs"
"$bin" run "$tmp/bom.tlbs" --iters 1 >/dev/null 2>"$tmp/e" || failmsg "a BOM: $(head -c 200 "$tmp/e")"
printf 'main {\n op\000\n}\n' >"$tmp/nul.tlbs"
"$bin" run "$tmp/nul.tlbs" >/dev/null 2>"$tmp/e"
[ $? = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] || failmsg "a NUL byte: $(cat "$tmp/e")"

if [ $fail = 0 ]; then
	echo "replay_overrides: PASS"
	exit 0
fi
exit 1
