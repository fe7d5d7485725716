#!/usr/bin/env bash
# Installs the Debian packages Cohost needs, only when some are missing.
#   scripts/ensure-packages.sh          libraries for building and running
#   scripts/ensure-packages.sh --test   plus ffmpeg, openssl and nginx with the RTMP and stream modules (tests, demo),
#                                       GStreamer's RTSP server with the system Python's bindings (the test camera),
#                                       PostgreSQL (the cluster tests start their own), chromium, coturn and nftables and
#                                       GStreamer's webrtcbin with libnice (Tests/WebRTC/test_networks.py), and the Python packages of scripts/validate-against-schemas.py (schema
#                                       conformance tests), of Tests/Schemathesis and of Tests/WebRTC (aiortc, Playwright driving Debian's chromium)
#   scripts/ensure-packages.sh --lint   eslint and what its default output needs (scripts/lint-web.sh); nothing else
#   scripts/ensure-packages.sh --bench  all of --test, plus janus (`make bench` compares its AudioBridge); the
#                                       package's own janus service is stopped and disabled: the bench runs its own
set -euo pipefail
packages=(libsrtp2-dev libopus-dev libvpx-dev libx264-dev librtmp-dev libavcodec-dev libavformat-dev libswresample-dev libswscale-dev libsrt-gnutls-dev libyuv-dev libssl-dev libsqlite3-dev libpq-dev libfreetype-dev libharfbuzz-dev fonts-noto-cjk fonts-dejavu-core pkg-config)
mode="${1:-}"
# eslint's default output (the "stylish" formatter) needs chalk, strip-ansi and text-table: only Recommends of eslint.
if [[ "$mode" == "--lint" ]]; then packages=(eslint node-chalk node-strip-ansi node-text-table); fi
if [[ "$mode" == "--test" || "$mode" == "--bench" ]]; then packages+=(ffmpeg nginx libnginx-mod-rtmp libnginx-mod-stream openssl chromium iproute2 util-linux postgresql python3-gi gir1.2-gst-rtsp-server-1.0 gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-ugly coturn nftables gstreamer1.0-plugins-bad gstreamer1.0-nice gir1.2-gst-plugins-bad-1.0); fi
if [[ "$mode" == "--bench" ]]; then packages+=(janus); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # The tests and the bench start their own janus and coturn: the packages' services stay off.
  for service in janus coturn; do
    if [[ " ${missing[*]} " == *" $service "* ]] && command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
      $sudo_cmd systemctl disable --now "$service" >/dev/null 2>&1 || true
    fi
  done
fi
if [[ "$mode" == "--test" || "$mode" == "--bench" ]]; then
  # scripts/validate-against-schemas.py: jsonschema (2020-12), openapi-spec-validator (OpenAPI 3.1), pyyaml.
  command -v python3 >/dev/null || { sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq; DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends python3 python3-pip; }
  if ! python3 -c 'import jsonschema, openapi_spec_validator, yaml, aiortc, playwright, numpy, schemathesis' 2>/dev/null
  then
    # Playwright only drives /usr/bin/chromium (Debian's): no browser download. schemathesis: Tests/Schemathesis.
    pypackages=(jsonschema openapi-spec-validator pyyaml aiortc playwright numpy schemathesis==4.32.5)
    echo "installing Python packages: ${pypackages[*]}"
    python3 -m pip install --quiet "${pypackages[@]}" 2>/dev/null \
      || python3 -m pip install --quiet --break-system-packages "${pypackages[@]}"
  fi
fi
command -v swift >/dev/null || { echo "swift is not on PATH: install the Swift 6 toolchain (https://swift.org/install)"; exit 1; }
