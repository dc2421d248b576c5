#!/usr/bin/env bash
# output_paths.sh TLBSIM - odd output paths, each a defect once:
#  - a FIFO with no reader: the writer waits in open(2), as a shell
#    redirection would, and SIGTERM ends that wait (the run's signals were
#    blocked: only SIGKILL did) - run --trace, check --trace, sweep -o;
#  - a symlink loop names no file: exit 2, one line, the links stay links
#    (the rename replaced one with a regular file);
#  - a file name of 250 bytes (NAME_MAX is 255) is written: the temporary
#    name is cut to fit (it failed "File name too long"); 256 bytes is
#    refused before anything runs;
#  - check --trace into /proc, under a missing directory or a path ending
#    in "/" is refused before the search: exit 2, nothing on stdout (the
#    search ran, printed its report and then failed, exit 3);
#  - merge -o and plot -o into a missing directory: exit 2, one line (under
#    ASan a leak made it 1);
#  - check --trace honours the umask (it forced 0644);
#  - a trace write error says what it was (ENOSPC was "out of memory").
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "output_paths: FAIL: $*"; fail=1; }
cd "$tmp" || exit 1
refused() {	# what, command... : exit 2, stdout empty, one stderr line
	local what=$1
	shift
	timeout 60 "$bin" "$@" >o 2>e
	local rc=$?
	if [ $rc != 2 ] || [ -s o ] || [ "$(wc -l <e)" != 1 ]; then
		failmsg "$what: exit $rc, stdout $(wc -c <o) bytes, stderr: $(head -c 300 e)"
	fi
}
chk=(check madv_race --policy nested_check=off --time-limit 5)

# FIFO without a reader: SIGTERM ends the wait (timeout's 124), no SIGKILL (137)
mkfifo ff
for cmd in "run mmap8 --iters 2 -j 1 --trace ff" "check madv_race --policy nested_check=off --time-limit 5 --trace ff" \
	"sweep mmap8 --iters 2 -j 1 --grid threads=1 -o ff"; do
	# shellcheck disable=SC2086
	timeout -k 5 3 "$bin" $cmd >/dev/null 2>&1
	rc=$?
	[ $rc = 124 ] || failmsg "$cmd into a FIFO without a reader: exit $rc (want 124: ended by SIGTERM)"
done
# with a reader it is written
(cat ff >fifo.out &)
timeout 60 "$bin" run mmap8 --iters 2 -j 1 --trace ff >/dev/null 2>&1 || failmsg "run --trace FIFO with a reader: exit $?"
sleep 0.2
grep -q traceEvents fifo.out || failmsg "run --trace FIFO with a reader: nothing read"

# a symlink loop
ln -s loop2 loop1
ln -s loop1 loop2
refused "run --trace LOOP" run mmap8 --iters 2 -j 1 --trace loop1
refused "check --trace LOOP" "${chk[@]}" --trace loop1
refused "sweep -o LOOP" sweep mmap8 --iters 2 -j 1 --grid threads=1 -o loop1
grep -q "symbolic links" e || failmsg "sweep -o LOOP: $(cat e)"
[ -L loop1 ] && [ -L loop2 ] || failmsg "a link of the loop was replaced"

# long names
n250=$(printf 'a%.0s' $(seq 1 245)).json
timeout 60 "$bin" run mmap8 --iters 2 -j 1 --trace "$n250" >/dev/null 2>e || failmsg "run --trace (250-byte name): $(cat e)"
[ -s "$n250" ] || failmsg "run --trace (250-byte name): no file"
timeout 60 "$bin" sweep mmap8 --iters 2 -j 1 --grid threads=1 -o "s$n250" >/dev/null 2>e ||
	failmsg "sweep -o (251-byte name): $(cat e)"
[ -s "s$n250" ] || failmsg "sweep -o (251-byte name): no file"
n256=$(printf 'a%.0s' $(seq 1 251)).json
refused "run --trace (256-byte name)" run mmap8 --iters 2 -j 1 --trace "$n256"
[ "$(ls | grep -c '^aaaa')" = 1 ] || failmsg "left behind: $(ls | grep '^aaa' | cut -c1-20 | sort | uniq -c)"

# check --trace: refused before the search
refused "check --trace /proc/x" "${chk[@]}" --trace /proc/x
refused "check --trace nothere/" "${chk[@]}" --trace nothere/
echo x >plain
refused "check --trace plain/" "${chk[@]}" --trace plain/

# merge / plot into a missing directory
timeout 60 "$bin" sweep mmap8 --iters 2 -j 1 --grid threads=1,2 -o sw.csv >/dev/null 2>&1
refused "merge -o missing/" merge sw.csv -o nonexist/m.csv
refused "plot -o missing/" plot sw.csv --x threads --y wall -o nonexist/p.svg

# check --trace and the umask
(umask 077 && timeout 60 "$bin" "${chk[@]}" --trace um.json >/dev/null 2>&1)
[ "$(stat -c %a um.json 2>/dev/null)" = 600 ] || failmsg "check --trace under umask 077: mode $(stat -c %a um.json 2>&1)"

# the note naming the file stays one line whatever the name
timeout 60 "$bin" run mmap8 --iters 2 -j 1 --trace $'nl\nname.json' >/dev/null 2>e
[ "$(wc -l <e)" = 1 ] && grep -qF 'nl\x0aname.json' e || failmsg "trace note for a name with a newline: $(cat e)"
rm -f $'nl\nname.json'

# tlbsim test's line for a file whose name holds a newline stays one line
mkdir tdir
printf 'main {\n op\n}\n' >tdir/$'t\nx.tlbs'
timeout 60 "$bin" test tdir --time-limit 0.1 >o 2>e
[ "$(grep -c '^ok ' o)" = 1 ] && grep -qF 't\x0ax.tlbs' o || failmsg "test with a newline in a file name: $(cat o e)"

# a write error is named as such (every one was "out of memory")
if [ -w /dev/full ]; then
	for fmt in chrome ftrace; do
		timeout 60 "$bin" run mmap8 --iters 2 -j 1 --trace /dev/full --trace-format $fmt >/dev/null 2>e
		rc=$?
		[ $rc = 3 ] && grep -q "cannot write: No space left on device" e ||
			failmsg "run --trace /dev/full ($fmt): exit $rc, $(cat e)"
	done
fi

# a failed write is exit 3 and one line, on stdout as on -o: output lost to a
# full stdout was exit 0 with nothing said (sweep, merge, plot, run), and
# merge and plot -o /dev/full were exit 2 where sweep's was 3
if [ -w /dev/full ]; then
	timeout 60 "$bin" sweep mmap8 --iters 5 --grid threads=1,2 -o wf.csv 2>/dev/null || failmsg "setup: sweep"
	for c in "sweep mmap8 --iters 5 --grid threads=1" "merge wf.csv" "plot wf.csv --x threads --y wall" \
		"run mmap8 --iters 2" "list workloads"; do
		# shellcheck disable=SC2086
		timeout 60 "$bin" $c >/dev/full 2>e
		rc=$?
		[ $rc = 3 ] && [ "$(wc -l <e)" = 1 ] &&
			grep -q "^tlbsim: write error on standard output: No space left on device$" e ||
			failmsg "$c >/dev/full: exit $rc, $(cat e)"
	done
	for c in "merge wf.csv" "plot wf.csv --x threads --y wall" "sweep mmap8 --iters 5 --grid threads=1"; do
		# shellcheck disable=SC2086
		timeout 60 "$bin" $c -o /dev/full >/dev/null 2>e
		rc=$?
		[ $rc = 3 ] && [ "$(wc -l <e)" = 1 ] && grep -q "cannot write: No space left on device" e ||
			failmsg "$c -o /dev/full: exit $rc, $(cat e)"
	done
fi

if [ $fail = 0 ]; then
	echo "output_paths: PASS"
	exit 0
fi
exit 1
