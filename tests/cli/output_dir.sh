#!/usr/bin/env bash
# output_dir.sh TLBSIM - every option that names a file to write refuses a
# directory up front: exit 2, one line on stderr naming the option and "Is a
# directory", nothing on stdout, and nothing simulated or measured first
# (compare --svg, sensitivity --svg and test --junit used to run everything
# and then fail, exit 3 or 2 after printing their results; calibrate -o
# measured for seconds first; import strace -o was exit 3). Reading a
# directory as an input file says "Is a directory" too (it said "read
# error" or "empty").
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "output_dir: FAIL: $*"; fail=1; }
cd "$tmp" || exit 1
mkdir d
printf 'main {\n op\n}\n' >s.tlbs
strace_line='1234  10:00:00.000001 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000 <0.000010>'
echo "$strace_line" >st.txt
check() {	# what, pattern, command...
	local what=$1 pat=$2
	shift 2
	timeout 20 "$bin" "$@" >o 2>e
	local rc=$?
	if [ $rc != 2 ] || [ -s o ] || [ "$(wc -l <e)" != 1 ] || ! grep -q -- "$pat" e; then
		failmsg "$what: exit $rc, stdout $(wc -c <o) bytes, stderr: $(head -c 300 e)"
	fi
}
check "compare --svg DIR" "--svg d: cannot write: Is a directory" \
	compare mmap8 --iters 5 --threads 2 --policy nested=v2 --policy nested=fullmm --svg d
check "sensitivity --svg DIR" "--svg d: cannot write there: Is a directory" \
	sensitivity mmap8 --iters 5 --threads 2 --svg d
check "test --junit DIR" "--junit d: cannot write: Is a directory" test s.tlbs --junit d
check "calibrate -o DIR" "calibrate: -o d: Is a directory" calibrate -o d
check "import strace -o DIR" "import strace: -o d: Is a directory" import strace st.txt -o d
check "import strace DIR" "import strace: d: Is a directory" import strace d
check "sweep -o DIR" "d: Is a directory" sweep mmap8 --iters 5 --grid threads=1 -o d
check "run --trace DIR" "--trace d: cannot create a file there: Is a directory" \
	run mmap8 --iters 5 --trace d
check "plot DIR" "plot: d: Is a directory" plot d --x a --y b
check "merge DIR" "merge: d: Is a directory" merge d d
check "--profile DIR" "profile d: Is a directory" run mmap8 --iters 5 --profile d
# the same commands with a file name work and leave no probe behind
"$bin" test s.tlbs --junit j.xml >/dev/null || failmsg "test --junit FILE exit $?"
[ -s j.xml ] || failmsg "no JUnit file"
"$bin" import strace st.txt -o st.tlbs 2>/dev/null || failmsg "import strace -o FILE exit $?"
[ -s st.tlbs ] || failmsg "no imported scenario"
ls -a | grep -q probe && failmsg "a probe file was left: $(ls -a)"
if [ $fail = 0 ]; then
	echo "output_dir: PASS"
	exit 0
fi
exit 1
