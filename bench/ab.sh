#!/bin/sh
# bench/ab.sh A B N ARGS... - compare two tlbsim binaries on one command.
#
# Runs "A ARGS" and "B ARGS" N times each, interleaved in pairs whose order
# alternates (so a drift of the machine's speed hits both alike), and
# prints the median and minimum of each one's user+sys seconds and the
# median and mean of the per-pair ratios B/A (below 1: B is faster).
# On a VM whose speed moves during the day, only paired ratios compare.
#
# Example: bench/ab.sh old/tlbsim build/release/tlbsim 16 run mmap8 --iters 20000
set -eu
if [ $# -lt 4 ]; then
	echo "usage: bench/ab.sh BIN_A BIN_B N ARGS..." >&2
	exit 2
fi
A=$1 B=$2 N=$3
shift 3
case $N in *[!0-9]* | '' | 0) echo "bench/ab.sh: N=$N: want a positive count" >&2; exit 2 ;; esac
out=$(mktemp)
trap 'rm -f "$out"' EXIT
i=1
while [ "$i" -le "$N" ]; do
	if [ $((i % 2)) -eq 0 ]; then order="a b"; else order="b a"; fi
	for w in $order; do
		if [ "$w" = a ]; then bin=$A; else bin=$B; fi
		# time(1)'s -o keeps the timing out of the program's own stderr
		/usr/bin/time -o "$out.t" -f "%U %S" "$bin" "$@" >/dev/null 2>&1 || true
		echo "$w $i $(awk '{print $1 + $2}' "$out.t")" >>"$out"
	done
	i=$((i + 1))
done
rm -f "$out.t"
python3 - "$out" <<'PY'
import statistics as st, sys
t = {"a": {}, "b": {}}
for line in open(sys.argv[1]):
    w, i, s = line.split()
    t[w][int(i)] = float(s)
a = [t["a"][i] for i in sorted(t["a"])]
b = [t["b"][i] for i in sorted(t["a"])]
r = [y / x for x, y in zip(a, b) if x > 0]
if not r:
    sys.exit("bench/ab.sh: A's runs took 0.00 s: too short to time, give them more work")
print("A median %.3f s min %.3f s | B median %.3f s min %.3f s | B/A median %.4f mean %.4f (%d pairs)"
      % (st.median(a), min(a), st.median(b), min(b), st.median(r), st.mean(r), len(r)))
PY
