#!/usr/bin/env bash
# tools/runtests.sh DIR... -- run the meson test suite of each build
# directory, show failures, and end with one line: "test: N passed, N failed,
# N skipped" (a test skips, exit 77, when the machine cannot run it: no root
# for network namespaces or raw sockets; its output says why).
set -uo pipefail
pass=0; fail=0; skip=0
for dir in "$@"; do
	echo "== tests in $dir" >&2
	meson test -C "$dir" --print-errorlogs --num-processes 2 >"$dir/meson-test.out" 2>&1
	rc=$?
	grep -E '^ *[0-9]+/[0-9]+ ' "$dir/meson-test.out" >&2 || true
	if [ $rc -ne 0 ] && [ -f "$dir/meson-logs/testlog.txt" ]; then
		# the log of every test that did not pass
		awk '/^=+ [0-9]+\/[0-9]+ =+$/ { blk = ""; bad = 0 }
		     { blk = blk $0 "\n" }
		     /^result:/ { bad = ($0 !~ /exit status 0/) }
		     /^=+$/ { if (bad) printf "%s", blk; bad = 0; blk = "" }' \
			"$dir/meson-logs/testlog.txt" | head -300 >&2
	fi
	log="$dir/meson-logs/testlog.json"
	if [ -f "$log" ]; then
		p=$(grep -c '"result": "OK"' "$log" || true)
		f=$(grep -c '"result": "\(FAIL\|TIMEOUT\|ERROR\|UNEXPECTEDPASS\)"' "$log" || true)
		s=$(grep -c '"result": "SKIP"' "$log" || true)
		pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
		[ $rc -eq 0 ] || [ "$f" -gt 0 ] || fail=$((fail + 1))
	else
		fail=$((fail + 1))
	fi
done
echo "test: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
