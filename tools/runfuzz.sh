#!/usr/bin/env bash
# tools/runfuzz.sh BUILD_DIR SECONDS -- run every libFuzzer target built in
# BUILD_DIR/tests/fuzz (a build configured with CC=clang -Dfuzz=true) for
# SECONDS each, starting from a temporary copy of its seed corpus
# (tests/fuzz/corpus/<target>; the committed corpus is never modified).
# A crash, a sanitizer report, a leak or a timeout fails the run; the
# input that caused it is kept in BUILD_DIR/fuzz-artifacts/<target>/ and
# its path printed.  Ends with one line: "fuzz: N passed, N failed".
set -uo pipefail

if [ $# -ne 2 ] || ! [[ $2 =~ ^[0-9]+$ ]] || [ "$2" -lt 1 ]; then
	echo "usage: $0 BUILD_DIR SECONDS" >&2
	exit 2
fi
build=$1
secs=$2
src=$(cd "$(dirname "$0")/.." && pwd)

targets=()
for t in "$build"/tests/fuzz/fuzz_*; do
	[ -f "$t" ] && [ -x "$t" ] && targets+=("$t")
done
if [ ${#targets[@]} -eq 0 ]; then
	echo "runfuzz: no fuzz targets in $build/tests/fuzz" \
		"(configure it with CC=clang and -Dfuzz=true)" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/runfuzz.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT

# Sanitizer reports must end the run (UBSan only warns by default).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

pass=0
fail=0
for t in "${targets[@]}"; do
	name=$(basename "$t")
	corpus="$work/$name"
	art="$build/fuzz-artifacts/$name"
	log="$work/$name.log"
	mkdir -p "$corpus" "$art"
	if [ -d "$src/tests/fuzz/corpus/$name" ]; then
		cp -R "$src/tests/fuzz/corpus/$name/." "$corpus/"
	fi
	echo "== $name: ${secs}s" >&2
	# -timeout: seconds one input may take; -rss_limit_mb: memory of
	# the whole process; -error_exitcode/-timeout_exitcode: non-zero
	"$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=8192 -artifact_prefix="$art/" -print_final_stats=1 \
		"$corpus" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	if [ $rc -eq 0 ]; then
		n=$(ls "$corpus" | wc -l)
		echo "$name: ok, ${runs:-?} runs, $n inputs in the corpus" >&2
		pass=$((pass + 1))
		continue
	fi
	fail=$((fail + 1))
	echo "$name: FAILED (exit $rc); the end of its log:" >&2
	grep -v '^#[0-9]' "$log" | tail -60 >&2
	inputs=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log")
	if [ -n "$inputs" ]; then
		for i in $inputs; do
			echo "$name: crashing input: $i" >&2
			echo "$name: reproduce with: $t $i" >&2
		done
	else
		echo "$name: no input written; see $art/" >&2
	fi
	cp "$log" "$art/last.log" 2>/dev/null && echo "$name: log: $art/last.log" >&2
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
