# Thin wrapper around meson.  The two commands the README names:
#   make bench   build, then run the benchmark report (the main job)
#                (bench-strperf, bench-paper, bench-sweep: strperf alone)
#   make test    build, then run every test: normal, ASan+UBSan, TSan,
#                and each libFuzzer target briefly (20 s)
#   make fuzz    the libFuzzer targets, FUZZ_SECONDS (60) each
# They install missing build tools first (tools/deps.sh).
PREFIX ?= /usr/local
MESON_OPTS ?=
FUZZ_SECONDS ?= 60
# a failing command in a pipeline (| tee) must fail the target
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: all build check test test-asan test-tsan fuzz bench bench-strperf \
	bench-paper bench-sweep install clean deps

all: build

deps:
	@tools/deps.sh build

build/build.ninja:
	@tools/deps.sh build
	meson setup build $(MESON_OPTS)

build: build/build.ninja
	ninja -C build

# normal build only (quick)
check: build
	tools/runtests.sh build

build-asan/build.ninja:
	@tools/deps.sh test
	meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

build-tsan/build.ninja:
	@tools/deps.sh test
	meson setup build-tsan -Db_sanitize=thread -Db_lundef=false

test-asan: build-asan/build.ninja
	ninja -C build-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		tools/runtests.sh build-asan

test-tsan: build-tsan/build.ninja
	ninja -C build-tsan
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" tools/runtests.sh build-tsan

# libFuzzer (clang): the library built with coverage, ASan and UBSan
build-fuzz/build.ninja:
	@tools/deps.sh test
	CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dbuildtype=debugoptimized

# every fuzz target for FUZZ_SECONDS, from its seed corpus; a crash, leak
# or timeout fails and names the input (kept in build-fuzz/fuzz-artifacts)
fuzz: build-fuzz/build.ninja
	ninja -C build-fuzz fuzz-targets
	tools/runfuzz.sh build-fuzz $(FUZZ_SECONDS)

# everything, as CI runs it
test: build/build.ninja build-asan/build.ninja build-tsan/build.ninja build-fuzz/build.ninja
	@tools/deps.sh test
	ninja -C build
	ninja -C build-asan
	ninja -C build-tsan
	ninja -C build-fuzz fuzz-targets
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
		tools/runtests.sh build build-asan build-tsan
	tools/runfuzz.sh build-fuzz 20

# the main job: the benchmark report in ./report (about 17 minutes):
# every strperf point three times, the implementations alternating, and
# the medians reported (one run per point moves by 0.6-1.5x on a shared
# machine); BENCH_REPEAT=1 is the quick run (about 6 minutes), and
# STRPERF_OPTS adds strperf options
BENCH_REPEAT ?= 3
STRPERF_OPTS ?=
bench: build
	@tools/deps.sh bench
	mkdir -p report
	./build/bench/bench_exec --csv report/exec.csv | tee report/exec.txt
	./build/bench/bench_pipe --placement split --csv report/pipe-split.csv | tee report/pipe-split.txt
	./build/bench/bench_pipe --placement same --csv report/pipe-same.csv | tee report/pipe-same.txt
	bench/strperf/strperf --out report --repeat $(BENCH_REPEAT) $(STRPERF_OPTS)

# strperf alone: the quick run (about 5 minutes) into ./report
bench-strperf: build
	@tools/deps.sh bench
	bench/strperf/strperf --out report $(STRPERF_OPTS)

# the papers' settings exactly (sizes 1..16384 by 2, 10 s per point,
# buffers 131071; about 50 minutes) into ./report/paper
bench-paper: build
	@tools/deps.sh bench
	bench/strperf/strperf --paper --out report/paper $(STRPERF_OPTS)

# message sizes stepped finely around the MTU boundaries, UDP_STREAM and
# TCP_STREAM (about 13 minutes) into ./report/sweep
bench-sweep: build
	@tools/deps.sh bench
	bench/strperf/strperf --sweep-mtu --out report/sweep $(STRPERF_OPTS)

install:
	@tools/deps.sh build
	meson setup build-install --prefix=$(abspath $(PREFIX)) --libdir=lib \
		--buildtype=release --wipe >/dev/null 2>&1 || \
		meson setup build-install --prefix=$(abspath $(PREFIX)) --libdir=lib \
		--buildtype=release
	ninja -C build-install
	meson install -C build-install

clean:
	rm -rf build build-asan build-tsan build-fuzz build-install
