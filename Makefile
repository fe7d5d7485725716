# Cohost: `make run` starts the server, `make test` runs every test. Both install what is missing.
SWIFT ?= swift
ARGS ?=

.PHONY: run build test demo bench fuzz packages test-packages clean

packages:
	@scripts/ensure-packages.sh

test-packages:
	@scripts/ensure-packages.sh --test

build: packages
	$(SWIFT) build -c release --product cohost

run: build
	.build/release/cohost serve $(ARGS)

# Tests start real processes (nginx-rtmp, ffmpeg, cohost); suites that do are serialised.
test: test-packages
	$(SWIFT) build --build-tests
	COHOST_BIN=$$($(SWIFT) build --show-bin-path)/cohost $(SWIFT) test --skip-build --no-parallel

demo: test-packages build
	scripts/demo.sh

# libFuzzer targets for the packet and SDP parsers (fuzz/); FUZZ_SECONDS per target, default 60.
fuzz: test-packages
	scripts/fuzz.sh

# Benchmarks (issue 7; BENCHMARKS.md): Cohost vs an ffmpeg mixer, latency, voice rooms, memory, allocations.
# Writes bench/results.json. BENCH_QUICK=1 for a short smoke run (~2 min); in full about 27 minutes. Installs janus
# (its AudioBridge is measured on the voice senders) besides what the tests need.
bench: build
	@scripts/ensure-packages.sh --bench
	python3 bench/bench.py

# RSS of one steady 720p room over SOAK_MINUTES (default 10); not part of `make test`. Writes bench/soak.json.
.PHONY: soak
soak: test-packages build
	python3 bench/soak.py

clean:
	rm -rf .build .build-fuzz demo
