#!/usr/bin/env bash
# install.sh BUILD_DIR - `cmake --install` into a temporary prefix puts
# bin/tlbsim, share/man/man1/tlbsim.1 and the bash completion in place; the
# man page renders (when man is installed) and names every command of
# `tlbsim --help`; the completion completes commands, options and values.
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failmsg() { echo "install: FAIL: $*"; fail=1; }
cmake --install "$build" --prefix "$tmp/p" >"$tmp/log" 2>&1 || { cat "$tmp/log"; failmsg "cmake --install"; }
bin=$tmp/p/bin/tlbsim man1=$tmp/p/share/man/man1/tlbsim.1
comp=$tmp/p/share/bash-completion/completions/tlbsim
for f in "$bin" "$man1" "$comp"; do
	[ -s "$f" ] || failmsg "$f not installed"
done
[ -x "$bin" ] && "$bin" --version | grep -q "^tlbsim " || failmsg "installed tlbsim does not run"
head -5 "$man1" | grep -q '^\.TH TLBSIM 1' || failmsg "man page has no .TH"
for cmd in $("$bin" --help | awk '/^commands:/{c=1;next} c && /^  [a-z]/{print $1}'); do
	grep -q "^\.B tlbsim $cmd\$\|^\.B $cmd\$" "$man1" || failmsg "the man page does not describe '$cmd'"
done
if command -v man >/dev/null; then
	MANWIDTH=80 man --warnings -l "$man1" >"$tmp/man.txt" 2>"$tmp/man.err" || failmsg "man -l failed"
	[ -s "$tmp/man.err" ] && failmsg "man warnings: $(head -3 "$tmp/man.err")"
	grep -q "^SYNOPSIS" "$tmp/man.txt" && grep -q "^EXIT STATUS" "$tmp/man.txt" ||
		failmsg "rendered man page lacks SYNOPSIS or EXIT STATUS"
fi
# completion: COMP_WORDS as bash fills them, with the installed tlbsim on PATH
complete_words() {
	PATH="$tmp/p/bin:$PATH" bash -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tlbsim
		printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@"
}
complete_words tlbsim sw | grep -qx sweep || failmsg "'tlbsim sw' does not complete to sweep"
complete_words tlbsim run --prof | grep -qx -- --profile || failmsg "'run --prof' does not complete"
complete_words tlbsim run --profile x86- | grep -qx x86-24 || failmsg "'--profile x86-' does not complete"
complete_words tlbsim sweep mmap | grep -qx mmap8 || failmsg "workload does not complete"
complete_words tlbsim compare mmap8 --policy nested=f | grep -qx nested=fullmm ||
	failmsg "--policy does not complete"
complete_words tlbsim sweep mmap8 --gr | grep -qx -- --grid || failmsg "sweep --gr does not complete"
if [ $fail = 0 ]; then
	echo "install: PASS"
	exit 0
fi
exit 1
