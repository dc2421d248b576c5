#!/usr/bin/env bash
# output_stream.sh TLBSIM - every option that names a file to write, given a
# FIFO (what /dev/stdout, a terminal or /dev/null are: an existing file that
# is not a regular one) or a symbolic link:
#   * a FIFO is written in place and stays a FIFO: a reader on it gets the
#     whole output, and sweep -o does not try to resume from it (it read
#     its own output stream and waited forever); the others used to write a
#     temporary file beside it and rename it over the FIFO - as root,
#     `-o /dev/stdout` replaced the /dev/stdout link in /dev with a file;
#   * a symbolic link stays a link, and the file it points to gets the
#     output (the rename used to replace the link with a file).
# Run with FIFOs and links in a scratch directory only: never point a build
# that may have the old behaviour at /dev/stdout or /dev/null as root.
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "output_stream: FAIL: $*"; fail=1; }
cd "$tmp" || exit 1
cp "$here/../../scenarios/madv_race.tlbs" s.tlbs
echo '1234  10:00:00.000001 mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000 <0.000010>' >st.txt
"$bin" sweep mmap8 --iters 5 --threads 2 --grid threads=1,2 -o s.csv 2>/dev/null ||
	failmsg "setup: sweep"
# name, the text the output starts with, the command with OUT for the path
cases=(
	"sweep -o|workload,|sweep mmap8 --iters 5 --grid threads=1,2 -o OUT"
	"compare --svg|<?xml|compare mmap8 --iters 5 --threads 2 --seeds 1 --policy nested=v2 --policy nested=fullmm --svg OUT"
	"sensitivity --svg|<svg|sensitivity mmap8 --iters 3 --threads 2 --svg OUT"
	"plot -o|<?xml|plot s.csv --x threads --y wall_ns -o OUT"
	"import strace -o|# imported|import strace st.txt -o OUT"
	"test --junit|<?xml|test s.tlbs --time-limit 1 --junit OUT"
	"run --trace|{|run mmap8 --iters 5 --threads 2 --trace OUT"
	"calibrate -o|# tlbsim machine profile|calibrate --budget 200 -o OUT"
)
for c in "${cases[@]}"; do
	IFS='|' read -r name head cmd <<<"$c"
	# a FIFO, with a reader
	rm -f fifo got
	mkfifo fifo
	timeout 60 cat fifo >got &
	reader=$!
	# shellcheck disable=SC2086
	timeout 60 "$bin" ${cmd//OUT/fifo} >out 2>err
	rc=$?
	# a writer that never opened the FIFO leaves the reader waiting
	kill -0 $reader 2>/dev/null && [ -p fifo ] && timeout 5 bash -c 'exec 3>fifo' 2>/dev/null
	kill $reader 2>/dev/null
	wait $reader 2>/dev/null
	[ "$rc" = 0 ] || failmsg "$name FIFO: exit $rc: $(head -c 300 err)"
	[ -p fifo ] || failmsg "$name FIFO: it is no longer a FIFO"
	case $(head -c 40 got) in
	"$head"*) ;;
	*) failmsg "$name FIFO: the reader got $(head -c 60 got | tr '\n' ' ')" ;;
	esac
	ls | grep -q '\.tmp\|\.probe' && failmsg "$name FIFO: a temporary file was left: $(ls)"
	rm -f fifo got
	# a symbolic link to a file in another directory
	mkdir -p real
	rm -f link real/target
	ln -s real/target link
	# shellcheck disable=SC2086
	timeout 60 "$bin" ${cmd//OUT/link} >out 2>err
	rc=$?
	[ "$rc" = 0 ] || failmsg "$name link: exit $rc: $(head -c 300 err)"
	[ -L link ] || failmsg "$name link: it is no longer a symbolic link"
	case $(head -c 40 real/target 2>/dev/null) in
	"$head"*) ;;
	*) failmsg "$name link: the target holds $(head -c 60 real/target 2>/dev/null | tr '\n' ' ')" ;;
	esac
	rm -f link real/target
done
if [ $fail = 0 ]; then
	echo "output_stream: PASS"
	exit 0
fi
exit 1
