#!/usr/bin/env bash
# tools/deps.sh [build|test|bench] -- install what the project needs and the
# machine lacks (Debian 12: apt-get; Python packages: pip).  Silent when
# everything is there already.
set -euo pipefail
what=${1:-build}

need_apt=()
have() { command -v "$1" >/dev/null 2>&1; }
have meson || need_apt+=(meson)
have ninja || need_apt+=(ninja-build)
have pkg-config || need_apt+=(pkg-config)
have cc || need_apt+=(gcc)
have git || need_apt+=(git)
if [ "$what" = test ]; then
	# gcc's sanitizer runtimes, clang's libFuzzer
	dpkg -s libasan8 >/dev/null 2>&1 || need_apt+=(libasan8)
	dpkg -s libubsan1 >/dev/null 2>&1 || need_apt+=(libubsan1)
	dpkg -s libtsan2 >/dev/null 2>&1 || need_apt+=(libtsan2)
	have clang || need_apt+=(clang)
	dpkg -s libclang-rt-14-dev >/dev/null 2>&1 || need_apt+=(libclang-rt-14-dev)
	# readable stack traces in fuzz crash reports
	have llvm-symbolizer || need_apt+=(llvm)
fi
if [ "$what" = bench ]; then
	# strperf: python3 (3.8+), setpriv for the sockets-nice test
	have python3 || need_apt+=(python3)
	have setpriv || need_apt+=(util-linux)
fi

if [ ${#need_apt[@]} -gt 0 ]; then
	echo "deps: installing ${need_apt[*]}" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >/dev/null
	$sudo apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ "$what" = bench ]; then
	# matplotlib for strperf's charts, into the python3 that runs strperf:
	# pip when that python has it (a virtualenv or pyenv python, or
	# Debian's with --break-system-packages), else Debian's package
	if ! python3 -c 'import matplotlib' >/dev/null 2>&1; then
		echo "deps: installing matplotlib" >&2
		if python3 -m pip --version >/dev/null 2>&1; then
			python3 -m pip install -q matplotlib >/dev/null 2>&1 ||
				python3 -m pip install -q --break-system-packages \
					matplotlib >/dev/null 2>&1 || true
		fi
		if ! python3 -c 'import matplotlib' >/dev/null 2>&1; then
			sudo=""
			[ "$(id -u)" -eq 0 ] || sudo="sudo"
			export DEBIAN_FRONTEND=noninteractive
			$sudo apt-get update -qq >/dev/null
			$sudo apt-get install -y -qq python3-matplotlib >/dev/null ||
				true
		fi
		if ! python3 -c 'import matplotlib' >/dev/null 2>&1; then
			echo "deps: matplotlib could not be installed for $(command -v python3);" \
				"install it (python3 -m pip install matplotlib) or run" \
				"bench/strperf/strperf --no-charts" >&2
			exit 1
		fi
	fi
fi
exit 0
