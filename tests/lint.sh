#!/usr/bin/env bash
# lint.sh BUILD - cppcheck over every translation unit of the build's
# compile database (src/, tests/, bench/), with the checks that find
# defects rather than style: warning, portability, performance. A finding
# that is the code's intent carries an inline "cppcheck-suppress" comment
# with its reason next to it. Prints each finding and "lint: PASS" or
# "lint: FAIL"; exits 77 (CTest: skipped) when cppcheck is not installed
# (Debian: apt-get install cppcheck; CI installs it).
set -u
build=${1:?usage: lint.sh BUILD}
db=$build/compile_commands.json
if ! command -v cppcheck >/dev/null 2>&1; then
	echo "lint: SKIP (cppcheck is not installed: apt-get install cppcheck)"
	exit 77
fi
if [ ! -s "$db" ]; then
	echo "lint: FAIL: $db is missing (configure with TLBSIM_LINT=ON)"
	exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cppcheck --project="$db" --enable=warning,portability,performance --inline-suppr \
	--error-exitcode=3 -q --template='{file}:{line}: {severity}: {message} [{id}]' \
	2>"$out"
rc=$?
cat "$out"
if [ "$rc" -ne 0 ] || [ -s "$out" ]; then
	echo "lint: FAIL (cppcheck $(cppcheck --version | cut -d' ' -f2), exit $rc)"
	exit 1
fi
echo "lint: PASS ($(grep -c '"file"' "$db") files, cppcheck $(cppcheck --version | cut -d' ' -f2))"
