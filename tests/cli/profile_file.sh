#!/usr/bin/env bash
# profile_file.sh TLBSIM - --profile FILE and tlbsim list profiles --dump NAME:
#   * every built-in profile dumped and loaded back runs byte-identically;
#   * a parameter in the file changes the run, -D still overrides it, cpus
#     and name come from the file;
#   * malformed files are one-line errors (exit 2) naming the line.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "profile_file: FAIL: $*"; fail=1; }

for p in $("$bin" list profiles | awk '{print $1}'); do
	"$bin" list profiles --dump "$p" >"$tmp/$p.prof" || failmsg "dump $p"
	"$bin" run mmap8 --iters 20 --threads 3 --profile "$p" --json >"$tmp/a" || failmsg "run $p"
	"$bin" run mmap8 --iters 20 --threads 3 --profile "$tmp/$p.prof" --json |
		sed "s#\"command\":\"[^\"]*\"#\"command\":\"\"#" >"$tmp/b"
	sed "s#\"command\":\"[^\"]*\"#\"command\":\"\"#" "$tmp/a" >"$tmp/a2"
	cmp -s "$tmp/a2" "$tmp/b" || failmsg "$p: the dumped file does not run as the built-in"
	# a dump of the loaded file is the same text
	"$bin" list profiles --dump "$tmp/$p.prof" >"$tmp/$p.2" || failmsg "dump of $p's file"
	cmp -s "$tmp/$p.prof" "$tmp/$p.2" || failmsg "$p: dump(load(dump)) differs"
done

f="$tmp/falkor-46.prof"
sed -e 's/^tlbi_op_ns = .*/tlbi_op_ns = 936/' -e 's/^name = .*/name = falkor-slow/' \
	-e 's/^cpus = .*/cpus = 8/' "$f" >"$tmp/slow.prof"
"$bin" run mmap8 --iters 20 --threads 3 --profile "$tmp/slow.prof" >"$tmp/s" || failmsg "slow"
grep -q "profile falkor-slow, 8 CPUs" "$tmp/s" || failmsg "name/cpus not from the file"
w0=$("$bin" run mmap8 --iters 20 --threads 3 --cpus 8 -D jitter=0 | awk '/^wall/ {print $2}')
w1=$("$bin" run mmap8 --iters 20 --threads 3 --profile "$tmp/slow.prof" -D jitter=0 | awk '/^wall/ {print $2}')
w2=$("$bin" run mmap8 --iters 20 --threads 3 --profile "$tmp/slow.prof" -D jitter=0 -D tlbi_op_ns=468 | awk '/^wall/ {print $2}')
# the file's value must change the run and -D must take it back; a slower
# TLBI need not lengthen wall (it shifts which CPU gets which freed page,
# and so which clears are cache-warm: here it shortens wall by 1.5 %)
python3 -c "import sys; a,b,c=map(float,sys.argv[1:]); sys.exit(0 if b != a and c == a else 1)" "$w0" "$w1" "$w2" ||
	failmsg "tlbi_op_ns from the file: wall $w0 (built-in), $w1 (file), $w2 (file, -D back)"

bad() {	# name, file text, expected stderr pattern
	printf '%b' "$2" >"$tmp/bad.prof"
	"$bin" run mmap8 --iters 1 --profile "$tmp/bad.prof" >"$tmp/o" 2>"$tmp/e"
	local rc=$?
	if [ $rc != 2 ] || [ "$(wc -l <"$tmp/e")" != 1 ] || ! grep -q -- "$3" "$tmp/e"; then
		failmsg "$1: exit $rc, stderr: $(head -c 300 "$tmp/e")"
	fi
}
H='name = t\narch = x86-64\npage_size = 4096\ncpus = 4\n'
bad "unknown key" "${H}bogus = 1\n" "bad.prof:5: unknown key 'bogus'"
bad "no equals" "${H}tlbi_op_ns\n" "bad.prof:5: want KEY = VALUE"
bad "duplicate" "${H}syscall_ns = 1\nsyscall_ns = 2\n" "bad.prof:6: syscall_ns given twice"
bad "negative" "${H}syscall_ns = -1\n" "want a non-negative integer"
bad "missing arch" 'name = t\npage_size = 4096\ncpus = 4\n' "missing arch"
bad "x86 64K" 'name = t\narch = x86-64\npage_size = 65536\ncpus = 4\n' "4096-byte pages only"
bad "page size" 'name = t\narch = arm64\npage_size = 8192\ncpus = 4\n' "page_size 8192"
bad "cpus" 'name = t\narch = arm64\npage_size = 4096\ncpus = 2000\n' "cpus 2000"
bad "absurd value" "${H}jitter = 99\n" "profile t: parameter jitter=99"
bad "bad name" 'name = a b\narch = arm64\npage_size = 4096\ncpus = 4\n' "name: want"
# a header key twice is an error like a parameter twice (the last one won)
for k in "cpus = 8" "name = t2" "arch = arm64" "page_size = 4096" "description = b"; do
	bad "${k%% *} twice" "description = a\n${H}${k}\n" "bad.prof:6: ${k%% *} given twice"
done
bad "long description" "description = $(printf 'x%.0s' $(seq 300))\n${H}" "bad.prof:1: description: at most 255 bytes"
bad "NUL byte" "${H}syscall_ns = 2\0000\n" "bad.prof:5: a NUL byte in the line"
bad "NUL byte, last line" "${H}syscall_ns = 2\0000" "bad.prof:5: a NUL byte in the line"
# an editor's byte order mark before the first key is not part of it
printf '\xef\xbb\xbf%b' "$H" >"$tmp/bom.prof"
"$bin" run mmap8 --iters 1 --threads 1 --profile "$tmp/bom.prof" >"$tmp/o" 2>"$tmp/e" ||
	failmsg "a byte order mark: $(head -c 300 "$tmp/e")"
"$bin" run mmap8 --profile "$tmp/nonexistent" >"$tmp/o" 2>"$tmp/e"
[ $? = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] || failmsg "a missing file is not a one-line exit 2"
# a directory: the error says so (it used to say "read error")
"$bin" run mmap8 --profile "$tmp" >"$tmp/o" 2>"$tmp/e"
[ $? = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q "Is a directory" "$tmp/e" ||
	failmsg "a directory as the profile: $(cat "$tmp/e")"

if [ $fail = 0 ]; then
	echo "profile_file: PASS"
	exit 0
fi
exit 1
