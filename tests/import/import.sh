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
#     file -> FILE:LINE message or one line, exit 2, no -o file;
#   * strace -ff output (one file per pid, PREFIX.PID, no pid column): the
#     files of the shipped trace, split by pid, import to the same scenario
#     as the -f file; an error names the file and line it is on; a file
#     without a .PID suffix among several is refused; empty files say there
#     are no syscall lines (under UBSan the merge's qsort of no lines stopped);
#   * 1500 mappings live at once (a real program's start: the limit was 200)
#     and an output past 1 MiB import, compile and run; an output past a
#     scenario file's 16 MiB is refused with one line;
#   * the output compiles whatever the file's name (a quote, a line break,
#     100 characters); --name at most 47; a pid <= 0 is a malformed prefix;
#     a thread's mmap printed before its parent's clone returned is the
#     process's; --touch skips PROT_NONE/MAP_NORESERVE reservations, and a
#     touch past the machine's RAM stops the run (exit 2); CRLF lines read as
#     LF; an unfinished call never resumed stays as a comment; one pid's -ff
#     file given twice is refused;
#   * a variable another task named (a thread's munmap of main's mapping) is
#     not reused by main's next mmap: the thread's munmap, run in the
#     model's order, hit main's new mapping;
#   * strace -i/-n/-r columns are skipped; -y paths with ')' stay one
#     argument; -o '' is exit 2; a -tt trace across midnight imports the
#     same from -ff files and a -f file, main the pid that started first.
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

# a real program's trace holds many mappings at once (a short Python 3
# program with three threads made 959 mmap calls; the limit was 200): 1500
# live mappings, each madvised and unmapped through its own variable, and
# an output past the old 1 MiB scenario file limit; the scenario compiles
# and runs
python3 - "$tmp/many.txt" <<'PY'
import sys
n = 1500
with open(sys.argv[1], "w") as f:
    t = 0
    def line(call):
        global t
        t += 1
        f.write("4242  10:00:%02d.%06d %s <0.000002>\n" % (t // 1000000, t % 1000000, call))
    for i in range(n):
        line("mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x%x"
             % (0x7f0000000000 + i * 0x10000))
        f.write("4242  10:00:00.000000 read(3, \"%s\", 800) = 800\n" % ("x" * 800))
    for i in range(n):
        a = 0x7f0000000000 + i * 0x10000
        line("madvise(0x%x, 4096, MADV_DONTNEED) = 0" % (a + 0x1000))
        line("munmap(0x%x, 8192) = 0" % a)
PY
"$bin" import strace "$tmp/many.txt" -o "$tmp/many.tlbs" 2>"$tmp/e" || failmsg "1500 live mappings: $(head -c 300 "$tmp/e")"
[ "$(grep -c '^ *m[0-9]* = mmap' "$tmp/many.tlbs")" = 1500 ] || failmsg "1500 live mappings: not 1500 mmaps"
[ "$(grep -c '^ *munmap(m[0-9]*, 0x2000)' "$tmp/many.tlbs")" = 1500 ] || failmsg "1500 live mappings: not 1500 munmaps of variables"
[ "$(grep -c '^ *madvise(m[0-9]* + 0x1000, 0x1000, dontneed)' "$tmp/many.tlbs")" = 1500 ] ||
	failmsg "1500 live mappings: not 1500 madvises inside them"
[ "$(wc -c <"$tmp/many.tlbs")" -gt 1048576 ] || failmsg "the big import is not past 1 MiB"
"$bin" run "$tmp/many.tlbs" --json >"$tmp/many.json" 2>"$tmp/e" || failmsg "run of 1500 mappings: $(head -c 300 "$tmp/e")"

# an output past what a scenario file may have (16 MiB) is refused with one
# line, and no -o file, instead of writing a file no command can load
python3 -c 'import sys
sys.stdout.write("4242  10:00:00.000001 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000 <0.000002>\n")
line = "4242  10:00:00.000002 read(3, \"" + "y" * 1000 + "\", 1000) = 1000\n"
sys.stdout.write(line * 18000)' >"$tmp/huge.txt"
rm -f "$tmp/huge.tlbs"
"$bin" import strace "$tmp/huge.txt" -o "$tmp/huge.tlbs" >/dev/null 2>"$tmp/e"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q "more than a scenario file may have (16 MiB)" "$tmp/e" ||
	failmsg "a 16 MiB+ output: exit $rc, $(head -c 300 "$tmp/e")"
[ -e "$tmp/huge.tlbs" ] && failmsg "a 16 MiB+ output was written"

# strace -ff -o PREFIX: the shipped trace split into one file per pid
mkdir -p "$tmp/ff"
awk -v d="$tmp/ff" '{ pid = $1; sub(/^[0-9]+ +/, ""); print > (d "/tr." pid) }' "$tr"
[ "$(ls "$tmp/ff" | wc -l)" = 4 ] || failmsg "-ff: the split made $(ls "$tmp/ff" | wc -l) files"
"$bin" import strace "$tmp"/ff/tr.* -o "$tmp/ff.tlbs" 2>"$tmp/e" || failmsg "-ff import: $(head -c 300 "$tmp/e")"
cmp -s <(sed 1,4d "$tmp/ff.tlbs") <(sed 1,4d "$tmp/a.tlbs") ||
	failmsg "-ff: the scenario differs from the -f file's: $(diff <(sed 1,4d "$tmp/ff.tlbs") <(sed 1,4d "$tmp/a.tlbs") | head -5)"
grep -q '^scenario tr "strace of .*/tr.12354 and 3 more files of strace -ff"$' "$tmp/ff.tlbs" ||
	failmsg "-ff: header $(sed -n 4p "$tmp/ff.tlbs")"
n=$(($(wc -l <"$tmp/ff/tr.12356") + 1))
echo "junk without a timestamp" >>"$tmp/ff/tr.12356"
"$bin" import strace "$tmp"/ff/tr.* -o "$tmp/ffbad.tlbs" >/dev/null 2>"$tmp/e"
rc=$?
[ $rc = 2 ] && grep -q "^$tmp/ff/tr.12356:$n: no -tt timestamp" "$tmp/e" ||
	failmsg "-ff: a bad line: exit $rc, $(head -c 300 "$tmp/e")"
[ -e "$tmp/ffbad.tlbs" ] && failmsg "-ff: a bad line: the file was written"
: >"$tmp/ff/empty.1"
: >"$tmp/ff/empty.2"
"$bin" import strace "$tmp/ff/empty.1" "$tmp/ff/empty.2" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 2 ] && grep -q "no syscall lines" "$tmp/e" || failmsg "-ff: empty files: exit $rc, $(head -c 300 "$tmp/e")"
cp "$tr" "$tmp/ff/trace.txt"
"$bin" import strace "$tmp/ff/tr.12354" "$tmp/ff/trace.txt" >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 2 ] && [ "$(wc -l <"$tmp/e")" = 1 ] && grep -q "'$tmp/ff/trace.txt' has no .PID suffix" "$tmp/e" ||
	failmsg "-ff: a file without .PID: exit $rc, $(head -c 300 "$tmp/e")"

cd "$tmp" || exit 1
# what import writes always compiles: a quote or a line break in the file's
# name (they ended the description string), a 47-character --name (more is
# refused: the language's names are at most 47), a long file name (cut)
b=$'12:00:00.000000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000\n12:00:00.000100 munmap(0x7f0000000000, 4096) = 0'
printf '%s\n' "$b" >'q"x'$'\n''y.txt'
printf '%s\n' "$b" >"$(printf 'a%.0s' $(seq 100)).txt"
for f in 'q"x'$'\n''y.txt' "$(printf 'a%.0s' $(seq 100)).txt"; do
	"$bin" import strace "$f" -o nm.tlbs 2>e && "$bin" run nm.tlbs --iters 1 >/dev/null 2>>e ||
		failmsg "the name '$f': $(head -c 300 e)"
done
"$bin" import strace "$f" --name "$(printf 'b%.0s' $(seq 47))" -o nm.tlbs 2>e &&
	"$bin" run nm.tlbs --iters 1 >/dev/null 2>>e || failmsg "--name of 47: $(head -c 300 e)"
"$bin" import strace "$f" --name "$(printf 'b%.0s' $(seq 48))" -o nm48.tlbs >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && [ ! -e nm48.tlbs ] || failmsg "--name of 48: $(cat e)"
# a pid that is not a positive number is a malformed prefix (it was written
# as a task named p-5, which did not parse)
printf '5 12:00:00.000000 clone(child_stack=NULL, flags=CLONE_VM) = 7\n[pid -5] %s\n' \
	"${b%%$'\n'*}" | sed 's/\[pid -5\] 12:00:00.000000 12:00/[pid -5] 12:00/' >neg.txt
"$bin" import strace neg.txt -o neg.tlbs >/dev/null 2>e
[ $? = 2 ] && grep -q "neg.txt:2: malformed pid prefix" e && [ ! -e neg.tlbs ] ||
	failmsg "a negative pid: $(cat e)"
# a thread's lines before its parent's clone returned (strace -f prints in
# time order): its mapping is the process's, found by its madvise and munmap
cat >early.txt <<'TR'
100 12:00:00.000000 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD, child_tid=0x7f1, parent_tid=0x7f1, exit_signal=0, stack=0x7f2, stack_size=0x7fff80, tls=0x7f3} <unfinished ...>
101 12:00:00.000100 mmap(NULL, 65536, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000 <0.000010>
100 12:00:00.000200 <... clone3 resumed> => {parent_tid=[101]}, 88) = 101 <0.000200>
101 12:00:00.000300 madvise(0x7f0000000000, 65536, MADV_DONTNEED) = 0 <0.000010>
101 12:00:00.000400 munmap(0x7f0000000000, 65536) = 0 <0.000010>
TR
"$bin" import strace early.txt -o early.tlbs 2>e || failmsg "early thread lines: $(cat e)"
grep -q "^    madvise(m0, 0x10000, dontneed)" early.tlbs && grep -q "^    munmap(m0, 0x10000)" early.tlbs ||
	failmsg "a thread's mapping before its clone returned was lost: $(grep -v '^#' early.tlbs | head -20)"
# ... and from its first line it finds the process's mappings, as do the
# threads it starts (they stayed in a space of their own)
cat >early2.txt <<'TR'
100 12:00:00.000000 mmap(NULL, 65536, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000100000
100 12:00:00.000010 clone(child_stack=0x7f00001ff000, flags=CLONE_VM|CLONE_THREAD <unfinished ...>
101 12:00:00.000020 clone(child_stack=0x7f00001ff000, flags=CLONE_VM|CLONE_THREAD) = 102
101 12:00:00.000025 munmap(0x7f0000100000, 4096) = 0
100 12:00:00.000040 <... clone resumed>) = 101
102 12:00:00.000050 mmap(NULL, 65536, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000200000
100 12:00:00.000060 munmap(0x7f0000200000, 65536) = 0
102 12:00:00.000070 munmap(0x7f0000101000, 4096) = 0
TR
"$bin" import strace early2.txt -o early2.tlbs 2>e || failmsg "early threads: $(cat e)"
[ "$(grep -c '^    munmap(m[01]' early2.tlbs)" = 3 ] && ! grep -q "not mapped by a traced mmap" early2.tlbs ||
	failmsg "an early thread or its thread missed the process's mappings: $(grep -v '^#' early2.tlbs | head -24)"
# a resumed line joins only the call of its name (after a lost line,
# <... getpid resumed> joined a pending munmap into one call of two)
printf '100 12:00:00.000000 munmap(0x7f0000000000, 4096 <unfinished ...>\n100 12:00:00.000100 <... getpid resumed>) = 100\n100 12:00:00.000200 getpid() = 100\n' >rn.txt
"$bin" import strace rn.txt -o rn.tlbs 2>e && grep -q "# resumed without its start: <... getpid resumed>" rn.tlbs &&
	! grep -q "^    munmap" rn.tlbs || failmsg "a resumed line of another call: $(grep -v '^#' rn.tlbs | head)"
# clone3 with CLONE_VM|CLONE_VFORK (posix_spawn, system()) is a process: the
# child execs and maps its own (it was a thread mapping into the parent)
cat >spawn.txt <<'TR'
100 12:00:00.000000 clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x7f2, stack_size=0x9000}, 88 <unfinished ...>
101 12:00:00.000100 execve("/bin/true", ["/bin/true"], 0x7ffd /* 20 vars */) = 0
101 12:00:00.000200 mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000
100 12:00:00.000300 <... clone3 resumed>) = 101
100 12:00:00.000400 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000010000
TR
"$bin" import strace spawn.txt -o spawn.tlbs 2>e || failmsg "CLONE_VFORK: $(cat e)"
grep -q "^    fork p101" spawn.tlbs && grep -q "^process p101 {" spawn.tlbs ||
	failmsg "CLONE_VM|CLONE_VFORK is not a process: $(grep -v '^#' spawn.tlbs | head -12)"
"$bin" run spawn.tlbs >/dev/null 2>e || failmsg "CLONE_VFORK file does not run: $(cat e)"
# a pid that no traced clone or fork starts (strace -e trace=memory): the
# file says its task never starts, and stderr notes it (it was silent)
printf '100 12:00:00.000000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000\n101 12:00:00.000100 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000010000\n' >mem.txt
"$bin" import strace mem.txt -o mem.tlbs 2>e || failmsg "a pid never started: exit $?, $(cat e)"
grep -q "note: mem.txt: 1 pid(s) (the first 101) have no clone or fork" e &&
	grep -q "^# no clone or fork of pid 101 in the trace" mem.tlbs ||
	failmsg "a pid never started is not noted: $(cat e)"
"$bin" import strace "$tr" -o quiet.tlbs 2>e && [ ! -s e ] || failmsg "the shipped trace: stderr $(cat e)"
# --touch leaves reservations alone (an ASan program's terabytes of
# MAP_NORESERVE ran for ever); a touch past the machine's RAM stops the run
printf '12:00:00.000000 mmap(NULL, 1099511627776, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0) = 0x100000000000\n' >huge.txt
"$bin" import strace huge.txt --touch -o huge.tlbs 2>e || failmsg "a reservation: $(cat e)"
grep -q "touch(" huge.tlbs && failmsg "--touch touches a MAP_NORESERVE reservation"
printf 'main {\n    m = mmap(0, 1T, private)\n    touch(m, 1T)\n}\n' >ht.tlbs
timeout -s KILL 60 "$bin" run ht.tlbs >/dev/null 2>e
rc=$?
[ $rc = 2 ] && grep -q "ht.tlbs:3:5: touch: 268435456 pages, more than the machine's RAM" e ||
	failmsg "a touch past RAM: exit $rc, $(head -c 300 e)"

# CRLF line ends are read as LF (every mmap read as failed: the \r stuck to
# its return value); a second <unfinished ...> of a pid before the first
# resumed keeps the first as a comment; one pid's -ff file twice is refused
printf '%s\n' "$b" | sed 's/$/\r/' >crlf.txt
"$bin" import strace crlf.txt -o crlf.tlbs 2>e && grep -q "^    m0 = mmap(0x7f0000000000, 0x1000, private)" crlf.tlbs ||
	failmsg "CRLF: $(cat e; grep -v '^#' crlf.tlbs | head -8)"
printf '100 12:00:00.000000 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0 <unfinished ...>\n100 12:00:00.000100 getpid( <unfinished ...>\n100 12:00:00.000200 <... getpid resumed>) = 100\n' >un.txt
"$bin" import strace un.txt -o un.tlbs 2>e && grep -q "# unfinished, never resumed: mmap(NULL, 4096" un.tlbs ||
	failmsg "a second <unfinished ...>: $(cat e; grep -v '^#' un.tlbs | head -8)"
printf '%s\n' "$b" >ffd.7
"$bin" import strace ffd.7 ffd.7 -o ffd.tlbs >/dev/null 2>e
[ $? = 2 ] && grep -q "'ffd.7' and 'ffd.7' are both pid 7's file" e && [ ! -e ffd.tlbs ] ||
	failmsg "one -ff file twice: $(cat e)"

# a thread unmaps main's mapping; main's next mmap takes a new variable
cat >reuse.txt <<'TRACE'
100 12:00:00.000000 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000
100 12:00:00.000010 clone(child_stack=0x7f00001ff000, flags=CLONE_VM|CLONE_THREAD) = 101
101 12:00:00.000015 munmap(0x7f0000000000, 4096) = 0
100 12:00:00.000016 mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000100000
100 12:00:00.000300 munmap(0x7f0000100000, 8192) = 0
TRACE
"$bin" import strace reuse.txt -o reuse.tlbs 2>e &&
	grep -q "^    m1 = mmap(0x7f0000100000, 0x2000, private)" reuse.tlbs &&
	grep -q "^    munmap(m0, 0x1000)" reuse.tlbs && grep -q "^    munmap(m1, 0x2000)" reuse.tlbs ||
	failmsg "a variable another task named was reused: $(cat e; grep -v '^#' reuse.tlbs | head -20)"

# the columns of strace -i, -n and -r after the timestamp are skipped (every
# line was unread: "FILE:0: no syscall lines"); a whole-file error names no line
printf '2385  04:21:48.902018 [00007f5d8beadca3] mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f5d8be83000\n2385  04:21:48.902118 [   9] munmap(0x7f5d8be83000, 8192) = 0\n2385  04:21:48.902218 (+     0.000211) mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f5d8be80000\n' >inr.txt
"$bin" import strace inr.txt -o inr.tlbs 2>e && [ "$(grep -c '^    m0 = mmap(0x7f5d8be8' inr.tlbs)" = 2 ] &&
	grep -q "^    munmap(m0, 0x2000)" inr.tlbs || failmsg "-i/-n/-r columns: $(cat e; grep -v '^#' inr.tlbs)"
: >empty0.txt
"$bin" import strace empty0.txt >/dev/null 2>e
grep -q "^empty0.txt: no syscall lines" e || failmsg "an empty file: $(cat e)"

# strace -y: a mapped file's path with ')' and ',' in it (printed unescaped
# but for '>') stays inside its argument (the mmap was "unread")
cat >y.txt <<'TRACE'
100 12:00:00.000000 mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_SHARED, 3</tmp/a),b, c\76d>, 0) = 0x7eff078dc000 <0.000017>
100 12:00:00.000100 munmap(0x7eff078dc000, 8192) = 0 <0.000042>
TRACE
"$bin" import strace y.txt -o y.tlbs 2>e && grep -q "^    m0 = mmap(0x7eff078dc000, 0x2000, shared)" y.tlbs &&
	grep -q "^    munmap(m0, 0x2000)" y.tlbs || failmsg "-y path with ')': $(cat e; grep -v '^#' y.tlbs)"

# a -tt trace across midnight: the -ff files and the -f file give the same
# scenario, main the pid that started first and the gaps across midnight
# kept (sorted as times of day, the child's line after midnight came first:
# it became main and the real main never started)
printf '23:59:59.900000 mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000\n23:59:59.950000 clone(child_stack=0x1, flags=CLONE_VM|CLONE_THREAD) = 101\n00:00:00.100000 munmap(0x7f0000000000, 8192) = 0\n' >mid.100
printf '00:00:00.050000 madvise(0x7f0000000000, 4096, MADV_DONTNEED) = 0\n' >mid.101
{ sed -n '1,2s/^/100 /p' mid.100; sed 's/^/101 /' mid.101; sed -n '3s/^/100 /p' mid.100; } >mid.txt
"$bin" import strace mid.100 mid.101 --name mid -o midff.tlbs 2>e &&
	"$bin" import strace mid.txt --name mid -o midf.tlbs 2>>e &&
	diff <(grep -v '^#\|^scenario' midff.tlbs) <(grep -v '^#\|^scenario' midf.tlbs) >/dev/null &&
	grep -q "^main {    # pid 100" midf.tlbs && grep -q "^    compute 150000000 ns" midf.tlbs &&
	grep -q "^    compute 100000000 ns" midf.tlbs ||
	failmsg "across midnight: $(cat e; grep -v '^#' midff.tlbs; grep -v '^#' midf.tlbs)"

# strace -X raw: flags and advice as numbers (MAP_SHARED 0x1, MAP_ANONYMOUS
# 0x20, MAP_NORESERVE 0x4000, PROT_NONE 0, MADV_DONTNEED 4, MADV_FREE 8):
# every mapping was private and "of fd", every madvise "not modelled"
printf '100 12:00:00.000000 mmap(NULL, 0x2000, 0x3, 0x21, 0xffffffff, 0) = 0x7f0000000000\n100 12:00:00.000100 madvise(0x7f0000000000, 0x1000, 0x4) = 0\n100 12:00:00.000200 mmap(NULL, 0x100000, 0, 0x4022, 0xffffffff, 0) = 0x7f0000100000\n100 12:00:00.000300 madvise(0x7f0000100000, 0x1000, 0x8) = 0\n' >xraw.txt
"$bin" import strace xraw.txt --touch -o xraw.tlbs 2>e &&
	grep -q "^    m0 = mmap(0x7f0000000000, 0x2000, shared)" xraw.tlbs &&
	grep -q "^    madvise(m0, 0x1000, dontneed)" xraw.tlbs && grep -q "^    madvise(m1, 0x1000, free)" xraw.tlbs &&
	grep -q "^    # not touched: a PROT_NONE or MAP_NORESERVE reservation" xraw.tlbs &&
	! grep -q "of fd" xraw.tlbs || failmsg "-X raw: $(cat e; grep -v '^#' xraw.tlbs)"

# -o '' is bad input (exit 2), as calibrate -o '' and test --junit '' are;
# the final rename's failure was reported as a host failure, exit 3
"$bin" import strace reuse.txt -o '' >/dev/null 2>e
[ $? = 2 ] && [ "$(wc -l <e)" = 1 ] && grep -q -- "-o: want a file name" e || failmsg "-o '': $(cat e)"

[ $fail = 0 ] && echo "import: PASS" || echo "import: FAIL"
