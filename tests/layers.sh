#!/usr/bin/env bash
# layers.sh SRC - the include rule of docs/design.md: a file may include
# headers of its own directory, of a lower layer, and the public API
# (tlbsim/tlbsim.h); never of a higher layer or of a peer. Layers from the
# top:
#   9 cli   8 check native   7 out   6 core scenario   5 oracle workload   4 mm   3 arch
#   2 hw    1 sim     0 cost
# Prints every violation and "layers: PASS" or "layers: FAIL".
set -u
src=${1:?usage: layers.sh SRC}
rank() {
	case $1 in
	cli) echo 9 ;; check|native) echo 8 ;; out) echo 7 ;; core|scenario) echo 6 ;;
	oracle|workload) echo 5 ;; mm) echo 4 ;; arch) echo 3 ;; hw) echo 2 ;;
	sim) echo 1 ;; cost) echo 0 ;; *) echo -1 ;;
	esac
}
fail=0
n=0
while IFS= read -r f; do
	dir=$(basename "$(dirname "$f")")
	r=$(rank "$dir")
	if [ "$r" -lt 0 ]; then
		echo "layers: FAIL: $f is in no known layer ($dir): add it to tests/layers.sh"
		fail=1
		continue
	fi
	while IFS= read -r inc; do
		n=$((n + 1))
		case $inc in
		tlbsim/tlbsim.h) continue ;;
		*/*) ;;
		*) continue ;;	# same directory (e.g. "coro.h")
		esac
		idir=${inc%%/*}
		[ "$idir" = "$dir" ] && continue
		ir=$(rank "$idir")
		if [ "$ir" -lt 0 ] || [ "$ir" -ge "$r" ]; then
			echo "layers: FAIL: $f (layer $dir, $r) includes \"$inc\" (layer $idir, $ir)"
			fail=1
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done < <(find "$src" -name '*.[chS]' | sort)
echo "layers: checked $n includes"
if [ $fail = 0 ]; then
	echo "layers: PASS"
	exit 0
fi
exit 1
