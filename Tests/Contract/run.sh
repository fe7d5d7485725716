#!/bin/sh
# Schemathesis against a real `cohost serve`: every operation of protocol/openapi.yaml, with generated valid and
# invalid requests (phases examples, coverage, fuzzing, stateful), must be answered as the contract says.
#
#   Tests/Contract/run.sh                      the whole check; exit 0 only when schemathesis reports no failure
#   Tests/Contract/run.sh --max-examples 200   more arguments go to `schemathesis run` after the defaults
#
# The run re-executes itself inside `unshare --net` (a network namespace with only loopback: needs root), so the
# server and the generated traffic never leave this machine. It does not build: COHOST_BIN names the binary
# (default .build/debug/cohost). Installs schemathesis 4.32.5 with pip when it is missing.
#
# Environment: COHOST_BIN; COHOST_CONTRACT_SEED (default 20261127); COHOST_CONTRACT_EXAMPLES, test cases per
# operation and phase (default: schemathesis.toml's, 40 and 80 for sequences); COHOST_CONTRACT_KEEP=1 keeps the
# temporary directory (server log, recordings) even when the run passes.
#
# Suggested Makefile target (after the build, like test-webrtc):
#
#   test-contract: build-tests
#   	COHOST_BIN=$$($(SWIFT) build --show-bin-path)/cohost Tests/Contract/run.sh
#
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
version=4.32.5

if [ "${COHOST_CONTRACT_NETNS:-}" != 1 ]; then
    # Outside the namespace: what needs the network (pip) or must fail early.
    if ! command -v schemathesis >/dev/null 2>&1; then
        echo "installing schemathesis $version"
        python3 -m pip install --quiet "schemathesis==$version" 2>/dev/null \
            || python3 -m pip install --quiet --break-system-packages "schemathesis==$version"
    fi
    installed=$(schemathesis --version 2>/dev/null | awk '{print $NF}')
    [ "$installed" = "$version" ] \
        || echo "run.sh: schemathesis $installed is installed; hooks.py is written for $version" >&2
    for tool in unshare ip; do
        command -v "$tool" >/dev/null 2>&1 || { echo "run.sh: $tool (util-linux, iproute2) is needed" >&2; exit 2; }
    done
    COHOST_CONTRACT_NETNS=1 exec unshare --net -- "$0" "$@"
fi
ip link set lo up

bin=${COHOST_BIN:-.build/debug/cohost}
case $bin in /*) ;; *) bin="$root/$bin" ;; esac
[ -x "$bin" ] || { echo "run.sh: no cohost binary at $bin (set COHOST_BIN or build first)" >&2; exit 2; }

start=$(date +%s)
work=$(mktemp -d /tmp/cohost-contract.XXXXXX)
server=
finish() {
    status=$?
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    if [ "$status" -ne 0 ] || [ "${COHOST_CONTRACT_KEEP:-}" = 1 ]; then
        echo "kept: $work (server.log, recordings)"
    else
        rm -rf "$work"
    fi
    echo "contract run: $(($(date +%s) - start)) s, exit $status"
    exit "$status"
}
trap finish EXIT
trap 'exit 130' INT TERM

# Only loopback exists in here: fixed ports cannot collide with anything outside.
port=7880
key=contract
secret=0123456789abcdef0123456789abcdef
# --max-token-ttl at its ceiling: every ttlSeconds the schema allows is then one this server accepts. A
# participant's join does not create a room (the default with keys; see RoomTokens in hooks.py).
"$bin" serve --http "127.0.0.1:$port" --rtp-port 7882 --keys "$key:$secret" --auto-create-rooms false \
    --max-token-ttl 31536000 --web-dir "$root/web" --recordings-dir "$work/recordings" --data-dir "$work/data" \
    >"$work/server.log" 2>&1 &
server=$!
if ! python3 - "$port" <<'EOF'
import sys, time, urllib.request
for _ in range(150):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/healthz", timeout=1).read()
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)
EOF
then
    echo "run.sh: cohost did not answer /healthz within 15 s; its log:" >&2
    cat "$work/server.log" >&2
    exit 1
fi
# hooks.py sends this admin token, and signs participant tokens for joins with the same key.
COHOST_CONTRACT_ADMIN_TOKEN=$("$bin" token --key "$key" --secret "$secret" --room '*' --user contract-admin --admin)
export COHOST_CONTRACT_ADMIN_TOKEN COHOST_CONTRACT_KEY="$key" COHOST_CONTRACT_SECRET="$secret"

cd "$work"
SCHEMATHESIS_HOOKS="$here/hooks.py" PYTHONDONTWRITEBYTECODE=1 \
    schemathesis --config-file "$here/schemathesis.toml" run "$root/protocol/openapi.yaml" \
    --url "http://127.0.0.1:$port" \
    --phases examples,coverage,fuzzing,stateful \
    --checks all \
    --seed "${COHOST_CONTRACT_SEED:-20261127}" \
    ${COHOST_CONTRACT_EXAMPLES:+--max-examples "$COHOST_CONTRACT_EXAMPLES"} \
    --generation-database none \
    --workers 1 \
    "$@"
