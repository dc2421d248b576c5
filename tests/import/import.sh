#!/usr/bin/env bash
# import.sh TLBSIM DIR - `tlbsim import strace` (src/scenario/strace.c) on the
# trace shipped in DIR (strace_threads.txt, made on a 2-vCPU x86-64 VM with
# strace -f -tt -T of strace_prog.c: interleaved pids, <unfinished ...> /
# <... resumed> pairs, clone3 threads, a fork):
#   * the output compiles and runs (exit 0), with and without --touch;
#   * one task per pid: main, two threads started with spawn, one process
#     started with fork; the workers' 3 x (mmap, madvise DONTNEED, munmap)
#     each, joined across their split lines; mprotect and brk as comments;
#   * addresses are kept: each mmap asks for its traced address, later calls
#     name it through the variable;
#   * the same input gives the same file; -o writes atomically;
#   * bad input: no timestamps, no syscall lines, unknown format, missing
#     file -> FILE:LINE message or one line, exit 2, no -o file.
set -u
bin=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "import: FAIL: $*"; fail=1; }
tr=$dir/strace_threads.txt

"$bin" import strace "$tr" -o "$tmp/a.tlbs" 2>"$tmp/e" || failmsg "import exit $?: $(cat "$tmp/e")"
[ -s "$tmp/e" ] && failmsg "stderr not empty: $(cat "$tmp/e")"
"$bin" run "$tmp/a.tlbs" >"$tmp/r" 2>&1 || failmsg "the imported file does not run: $(head -3 "$tmp/r")"
"$bin" import strace "$tr" --touch -o "$tmp/t.tlbs" || failmsg "--touch exit $?"
"$bin" run "$tmp/t.tlbs" --json >"$tmp/rt.json" 2>&1 || failmsg "the --touch file does not run"
python3 - "$tmp/a.tlbs" "$tmp/rt.json" "$tr" <<'PY' || fail=1
import json, re, sys
text = open(sys.argv[1]).read()
bad = []
tasks = re.findall(r"^(main|thread \w+|process \w+) \{", text, re.M)
if len(tasks) != 4 or tasks[0] != "main" or sum(t.startswith("thread") for t in tasks) != 2 \
        or sum(t.startswith("process") for t in tasks) != 1:
    bad.append("tasks %r" % tasks)
if len(re.findall(r"^\s+spawn t\d+$", text, re.M)) != 2 or len(re.findall(r"^\s+fork p\d+$", text, re.M)) != 1:
    bad.append("spawn/fork statements")
# per worker thread: 3 mmaps of 64 KiB, 3 MADV_DONTNEED, 3 munmaps
for body in re.findall(r"^thread \w+ \{\n(.*?)^\}", text, re.M | re.S):
    n = (len(re.findall(r"= mmap\(0x[0-9a-f]+, 0x10000, private\)", body)),
         len(re.findall(r"^\s+madvise\(m\d+, 0x10000, dontneed\)", body, re.M)),
         len(re.findall(r"^\s+munmap\(m\d+, 0x10000\)", body, re.M)))
    if n != (3, 3, 3):
        bad.append("worker mmap/madvise/munmap %r" % (n,))
if "# not modelled: mprotect(" not in text:
    bad.append("mprotect is not a comment")
# every traced mmap that succeeded asks for its address
traced = re.findall(r"mmap\((?:NULL|0x[0-9a-f]+), \d+, [^)]*\) = (0x[0-9a-f]+)", open(sys.argv[3]).read())
for a in traced:
    if "mmap(%s," % a not in text:
        bad.append("mmap at %s lost" % a); break
m = json.load(open(sys.argv[2]))["metrics"]
if m["page_faults"] < 3 * 2 * 16:
    bad.append("--touch: %d page faults" % m["page_faults"])
for b in bad:
    print("import: FAIL:", b)
sys.exit(1 if bad else 0)
PY
"$bin" import strace "$tr" >"$tmp/b.tlbs" || failmsg "import to stdout"
cmp -s "$tmp/a.tlbs" "$tmp/b.tlbs" || failmsg "two imports differ"

bad() {	# name, file text, stderr pattern
	printf '%b' "$2" >"$tmp/in.txt"
	rm -f "$tmp/o.tlbs"
	"$bin" import strace "$tmp/in.txt" -o "$tmp/o.tlbs" >"$tmp/o" 2>"$tmp/e"
	local rc=$?
	[ $rc = 2 ] && grep -q -- "$3" "$tmp/e" || failmsg "$1: exit $rc, stderr $(head -c 200 "$tmp/e")"
	[ -e "$tmp/o.tlbs" ] && failmsg "$1: an output file was written"
}
bad "no timestamp" "123 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x1000\n" "in.txt:1: no -tt timestamp"
bad "empty" "" "no syscall lines"
bad "not strace" "hello world\n" "in.txt:1:"
# past the error limit (SCEN_MAX_ERRORS, 10) the importer says it gave up,
# as the scenario compiler does, instead of going quiet
bad "many errors" "$(printf 'x%.0s\\n' $(seq 1 30))" "in.txt: too many errors, giving up"
[ "$(wc -l <"$tmp/e")" = 11 ] || failmsg "many errors: $(wc -l <"$tmp/e") lines, want 10 and the last"
"$bin" import ltrace "$tr" >/dev/null 2>"$tmp/e"
[ $? = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] || failmsg "unknown format: $(cat "$tmp/e")"
"$bin" import strace "$tmp/nope.txt" >/dev/null 2>"$tmp/e"
[ $? = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] || failmsg "missing file: $(cat "$tmp/e")"

[ $fail = 0 ] && echo "import: PASS" || echo "import: FAIL"
