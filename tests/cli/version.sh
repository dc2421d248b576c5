#!/usr/bin/env bash
# version.sh TLBSIM SRC - tlbsim --version names the version and the git
# revision, which cmake/revision.cmake looks up at build time: the 12-digit
# hash of HEAD ("-dirty" with local changes) in a git work tree, "unknown"
# elsewhere (a tarball without .git, or a directory inside another repository).
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "version: FAIL: $*"; fail=1; }
out=$("$bin" --version)
echo "$out" | grep -Eq '^tlbsim [0-9]+\.[0-9]+\.[0-9]+ \(revision ([0-9a-f]{12}(-dirty)?|unknown)\)$' ||
	failmsg "--version says '$out'"
rev() { # rev DIR: the revision the build script finds there
	rm -f "$tmp/rev.h"
	cmake -DSRC="$1" -DOUT="$tmp/rev.h" -P "$src/cmake/revision.cmake" >/dev/null 2>&1 ||
		failmsg "revision.cmake failed on $1"
	sed -n 's/^#define TLBSIM_REVISION "\(.*\)"$/\1/p' "$tmp/rev.h"
}
# a tarball: the source without .git
mkdir -p "$tmp/tarball/src"
cp "$src/CMakeLists.txt" "$tmp/tarball/"
[ "$(rev "$tmp/tarball")" = unknown ] || failmsg "a tree without .git gives '$(rev "$tmp/tarball")'"
if command -v git >/dev/null; then
	g=(git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=main)
	mkdir -p "$tmp/repo/sub"
	"${g[@]}" -C "$tmp/repo" init -q && echo a >"$tmp/repo/f" && "${g[@]}" -C "$tmp/repo" add f &&
		"${g[@]}" -C "$tmp/repo" commit -qm one || failmsg "git setup"
	want=$(git -C "$tmp/repo" rev-parse --short=12 HEAD)
	[ "$(rev "$tmp/repo")" = "$want" ] || failmsg "clean repo: '$(rev "$tmp/repo")', want $want"
	echo b >"$tmp/repo/f"
	[ "$(rev "$tmp/repo")" = "$want-dirty" ] || failmsg "changed repo: '$(rev "$tmp/repo")'"
	# a source tree unpacked inside some other repository is not that repository
	mkdir -p "$tmp/repo/unpacked"
	touch "$tmp/repo/unpacked/.git"
	[ "$(rev "$tmp/repo/unpacked")" = unknown ] || failmsg "nested tree: '$(rev "$tmp/repo/unpacked")'"
	# the header is rewritten only when the revision changes
	cmake -DSRC="$tmp/repo" -DOUT="$tmp/keep.h" -P "$src/cmake/revision.cmake"
	touch -d '2000-01-01' "$tmp/keep.h"
	cmake -DSRC="$tmp/repo" -DOUT="$tmp/keep.h" -P "$src/cmake/revision.cmake"
	[ "$(stat -c %Y "$tmp/keep.h")" = "$(date -d 2000-01-01 +%s)" ] || failmsg "header rewritten unchanged"
else
	echo "version: git not installed: the git cases are skipped"
fi
if [ $fail = 0 ]; then
	echo "version: PASS"
	exit 0
fi
exit 1
