#!/usr/bin/env bash
# build_without_cmocka.sh SRC CC - configure and build the tlbsim binary with
# BUILD_TESTING=OFF and cmocka made unfindable, then run it once.
set -u
src=$1 cc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! cmake -S "$src" -B "$tmp" -G Ninja -DCMAKE_C_COMPILER="$cc" -DBUILD_TESTING=OFF \
	-DCMOCKA_LIB=CMOCKA_LIB-NOTFOUND -DCMAKE_BUILD_TYPE=Release >"$tmp/log" 2>&1; then
	cat "$tmp/log"; echo "build_without_cmocka: FAIL: configure"; exit 1
fi
if ! cmake --build "$tmp" --target tlbsim >>"$tmp/log" 2>&1; then
	cat "$tmp/log"; echo "build_without_cmocka: FAIL: build"; exit 1
fi
if grep -qi cmocka "$tmp/build.ninja"; then
	echo "build_without_cmocka: FAIL: build.ninja mentions cmocka"; exit 1
fi
"$tmp/tlbsim" --version || { echo "build_without_cmocka: FAIL: run"; exit 1; }
echo "build_without_cmocka: PASS"
