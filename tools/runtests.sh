#!/usr/bin/env bash
# tools/runtests.sh DIR... -- run the meson test suite of each build
# directory, show failures, and end with one line: "test: N passed, N failed".
set -uo pipefail
pass=0; fail=0
for dir in "$@"; do
	echo "== tests in $dir" >&2
	meson test -C "$dir" --print-errorlogs --num-processes 2 >"$dir/meson-test.out" 2>&1
	rc=$?
	grep -E '^ *[0-9]+/[0-9]+ ' "$dir/meson-test.out" >&2 || true
	if [ $rc -ne 0 ]; then
		sed -n '/Listing only the last/,$p;/^==* [0-9]*\/[0-9]* ==*/,$p' \
			"$dir/meson-test.out" | head -200 >&2
	fi
	log="$dir/meson-logs/testlog.json"
	if [ -f "$log" ]; then
		p=$(grep -c '"result": "OK"' "$log" || true)
		f=$(grep -c '"result": "\(FAIL\|TIMEOUT\|ERROR\|UNEXPECTEDPASS\)"' "$log" || true)
		pass=$((pass + p)); fail=$((fail + f))
		[ $rc -eq 0 ] || [ "$f" -gt 0 ] || fail=$((fail + 1))
	else
		fail=$((fail + 1))
	fi
done
echo "test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
