#!/usr/bin/env bash
# run_fuzz.sh TARGET SEED_CORPUS SECONDS - run a libFuzzer target for SECONDS
# from a copy of the seed corpus (the repository's corpus is not written);
# any crash, leak, timeout (5 s per input) or out-of-memory fails. Prints the
# executions and coverage libFuzzer reached, then "run_fuzz: PASS" or
# "run_fuzz: FAIL".
set -u
target=$1
seeds=$2
secs=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/corpus" "$tmp/art"
"$target" "$tmp/corpus" "$seeds" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
	-max_len=65536 -artifact_prefix="$tmp/art/" -print_final_stats=1 >"$tmp/log" 2>&1
rc=$?
grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$tmp/log"
grep -E "cov: [0-9]+" "$tmp/log" | tail -1
if [ $rc != 0 ] || ls "$tmp/art" | grep -q .; then
	tail -40 "$tmp/log"
	for a in "$tmp"/art/*; do [ -f "$a" ] && { echo "input: $a"; od -c "$a" | head -20; }; done
	echo "run_fuzz: FAIL (exit $rc)"
	exit 1
fi
echo "run_fuzz: PASS"
