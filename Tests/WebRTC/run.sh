#!/bin/sh
# The WebRTC end-to-end tests (Python: aiortc and headless Chromium against a real `cohost serve`).
#
#   Tests/WebRTC/run.sh                      every suite: test_aiortc, test_chromium, test_https, test_join_page, test_console,
#                                            test_show, test_whep, test_recording, test_networks
#   Tests/WebRTC/run.sh test_aiortc          one module (or test_aiortc.CohostAiortcTests.test_whip, …)
#
# Each run re-executes itself inside `unshare --net` (a network namespace with only loopback: needs root), so
# nothing it starts is reachable from outside. It does not build: COHOST_BIN names the binary (default
# .build/debug/cohost). Needs python3 with aiortc, playwright (pip) and numpy, /usr/bin/chromium (no Playwright
# browser download), ffmpeg, nginx with libnginx-mod-rtmp, util-linux's unshare and iproute2's ip; test_networks
# also nft (nftables), coturn's turnserver and Debian's /usr/bin/python3 with GStreamer's webrtcbin and libnice.
#
# Environment: COHOST_BIN, COHOST_WEBRTC_KEEP=1 (keep logs and pulled FLVs in /tmp), COHOST_WEBRTC_ALLOW_UNSUPPORTED=1
# (a server without WebRTC: 415 unsupported_transport skips instead of failing), COHOST_CHROMIUM (default
# /usr/bin/chromium).
#
# Suggested Makefile target (runs after the build, like test-e2e; not part of the parallel unit suites):
#
#   test-webrtc: build-tests
#   	COHOST_BIN=$$($(SWIFT) build --show-bin-path)/cohost Tests/WebRTC/run.sh
#
set -eu
cd "$(dirname "$0")"
export PYTHONDONTWRITEBYTECODE=1
# Without arguments: the suites that test Cohost. test_harness and test_chromium.ChromiumSandboxTests check this
# sandbox itself (namespace, tokens, fake devices, a browser-to-browser call): run them by name when it changes.
if [ "$#" -eq 0 ]; then
    set -- test_aiortc test_chromium.ChromiumCohostTests test_https test_join_page test_console test_show test_whep \
        test_recording test_networks
fi
exec python3 -m unittest -v "$@"
