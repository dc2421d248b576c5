#!/bin/sh
# The training set of the release build's profile-guided optimisation
# (CMakeLists.txt, TLBSIM_PGO): short runs of the jobs users run most - the
# seed-000 pair (the README's main command), the seed-001 and seed-003 jobs,
# a check, a few other workloads - with the instrumented binary $1. The
# profile only steers code layout and inlining; results do not depend on it.
# A failing step ends the training with a warning: the build goes on with
# the profile gathered so far.
T="$1"
step() {
	"$T" "$@" >/dev/null 2>&1 && return 0
	echo "pgo-train: 'tlbsim $*' failed; the release build goes on with the profile so far" >&2
	exit 0
}
# the README's main job weighs most: with 2000 iterations each, a small
# change elsewhere could move the pair's time by 5-7 % through code layout
# alone (bench/README.md, 2026-12-04); 10000 also takes 1.5 % of its
# instructions off
step run mmap8 --policy nested=v2 --iters 10000
step run mmap8 --policy nested=fullmm --iters 10000
step run mmap8 --profile x86-24 --iters 1000
step run page_fault3 --tasks 8 -w size=2M
step run page_fault3 --profile x86-24 --tasks 8 -w size=2M
step run kbuild -w jobs=300
step run tlb_flush2 --profile x86-24 --threads 8 -w mode=threads
step run ebizzy --profile x86-24 --threads 8
step check mmap5 --profile falkor-46 --policy nested=fullmm --runs 2000
step check madv_race --policy nested_check=on --runs 1000
