# Cohost: `make run` starts the server, `make test` runs every test. Both install what is missing.
SWIFT ?= swift
ARGS ?=

.PHONY: run build build-tests test test-unit test-e2e test-webrtc test-schemathesis tsan lint demo bench fuzz packages test-packages clean

packages:
	@scripts/ensure-packages.sh

test-packages:
	@scripts/ensure-packages.sh --test

build: packages
	$(SWIFT) build -c release --product cohost

run: build
	.build/release/cohost serve $(ARGS)

# Line tables only (enough for backtraces) and no C debug info: the debug build with tests is most of `make test`,
# and full DWARF for two copies of the dependencies' C is time nobody reads. The index store stays: on Linux the
# test build finds the tests through it. `swift build` by hand with other flags builds everything again; after
# `make build-tests`, run single suites with `swift test --skip-build --filter …`.
DEBUG_FLAGS ?= -Xswiftc -gline-tables-only -Xcc -g0

build-tests: test-packages
	$(SWIFT) build --build-tests $(DEBUG_FLAGS)

# Unit suites run in parallel. The end-to-end suites start real processes (nginx-rtmp, ffmpeg, cohost) and some
# measure timing: they nest under one serialised parent suite (`EndToEnd`) and run after the unit suites.
UNIT = $(SWIFT) test --skip-build --skip EndToEndTests
E2E_RUN = COHOST_BIN=$$($(SWIFT) build --show-bin-path)/cohost $(SWIFT) test --skip-build
E2E = $(E2E_RUN) --filter EndToEndTests
# Real WebRTC clients (aiortc, headless Chromium through Playwright) in a network namespace with only loopback
# (Tests/WebRTC/README.md); needs root for `unshare --net`.
WEBRTC = COHOST_BIN=$$($(SWIFT) build --show-bin-path)/cohost Tests/WebRTC/run.sh
# protocol/openapi.yaml checked by schemathesis against a real server (Tests/Schemathesis/README.md).
SCHEMATHESIS = COHOST_BIN=$$($(SWIFT) build --show-bin-path)/cohost Tests/Schemathesis/run.sh

# End-to-end suites that check behaviour and measure no time beyond generous waits (command line, API contract,
# safe defaults, room service).
# The pattern names whole suites (a suite's own checks run only where its tests do).
E2E_FUNCTIONAL = EndToEndTests\.EndToEnd/(CommandLineTests|SchemaConformanceTests|SchemaValidatorTests|SafeDefaultsTests|RoomServiceTests)($$|/)

# WebRTC suites whose checks are outcomes with generous waits (paths through firewalls and TURN, webrtcbin), and
# the others, which measure delays, levels and rates (a connection flood's effect on a guest's packets a second).
WEBRTC_FUNCTIONAL = test_networks.ChromiumPaths test_networks.WHIPThroughTURN test_networks.WebRTCBinTests \
	test_networks.PublicAddressFromSTUNTests
WEBRTC_TIMED = test_aiortc test_chromium.ChromiumCohostTests test_https test_join_page test_console test_show \
	test_whep test_recording test_networks.HalfOpenFloodTests

# Schemathesis runs beside the unit suites and then the functional end-to-end suites (its servers mostly wait on its
# generator, and none of these measures wall time against a bound it could miss), as do the functional WebRTC suites
# once the unit suites are done; then their output is printed. The other end-to-end suites and WebRTC suites, which
# do measure, run alone.
test: build-tests
	@$(SCHEMATHESIS) > .build/schemathesis.log 2>&1 & schema=$$!; \
	$(UNIT); unit=$$?; \
	$(WEBRTC) $(WEBRTC_FUNCTIONAL) > .build/webrtc-functional.log 2>&1 & webrtc=$$!; \
	$(E2E_RUN) --filter '$(E2E_FUNCTIONAL)'; functional=$$?; \
	wait $$schema; schemathesis=$$?; wait $$webrtc; networks=$$?; \
	cat .build/schemathesis.log .build/webrtc-functional.log; \
	[ $$unit -eq 0 ] && [ $$functional -eq 0 ] && [ $$schemathesis -eq 0 ] && [ $$networks -eq 0 ]
	$(E2E) --skip '$(E2E_FUNCTIONAL)'
	$(WEBRTC) $(WEBRTC_TIMED)

test-unit: build-tests
	$(UNIT)

test-e2e: build-tests
	$(E2E)

test-webrtc: build-tests
	$(WEBRTC)

test-schemathesis: build-tests
	$(SCHEMATHESIS)

# The end-to-end suites against a cohost built with ThreadSanitizer (.build-tsan); reports go to .build-tsan/reports
# (one file per report; none is a pass). Timing-sensitive suites may fail under the slower binary: the reports
# are what this target is for. Not part of `make test`.
tsan: build-tests
	$(SWIFT) build --sanitize=thread --product cohost --scratch-path .build-tsan
	rm -rf .build-tsan/reports && mkdir -p .build-tsan/reports
	-TSAN_OPTIONS="log_path=$(CURDIR)/.build-tsan/reports/tsan halt_on_error=0" \
	  COHOST_BIN=$(CURDIR)/.build-tsan/debug/cohost $(SWIFT) test --skip-build --filter EndToEndTests
	@n=$$(ls .build-tsan/reports | wc -l); echo "ThreadSanitizer reports: $$n (.build-tsan/reports)"; test $$n -eq 0

# swift-format (the toolchain's) with .swift-format: line length, one statement per line; Package.swift declaring
# exactly what each target imports; eslint (Debian's) over the web client with web/.eslintrc.json.
lint:
	$(SWIFT) format lint --strict --parallel --recursive Sources Tests fuzz bench/ReturnProbe Package.swift
	python3 scripts/check-imports.py
	scripts/lint-web.sh

demo: test-packages build
	scripts/demo.sh

# libFuzzer targets for the parsers of everything from outside (fuzz/); FUZZ_SECONDS per target, default 60.
fuzz: test-packages
	scripts/fuzz.sh

# Benchmarks (BENCHMARKS.md): Cohost vs an ffmpeg mixer, latency, voice rooms, memory, allocations.
# Writes bench/results.json. BENCH_QUICK=1 for a short smoke run (~2 min); in full about 30 minutes. Installs janus
# (its AudioBridge is measured on the voice senders) besides what the tests need.
bench: build
	@scripts/ensure-packages.sh --bench
	$(SWIFT) build -c release --product ReturnProbe
	python3 bench/bench.py

# RSS of one steady 720p room over SOAK_MINUTES (default 10); not part of `make test`. Writes bench/soak.json.
.PHONY: soak
soak: test-packages build
	python3 bench/soak.py

clean:
	rm -rf .build .build-fuzz .build-tsan demo
