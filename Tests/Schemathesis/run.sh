#!/bin/sh
# Schemathesis against a real `cohost serve`: every operation of protocol/openapi.yaml, with generated valid and
# invalid requests, must be answered as the schema says. Two runs, side by side, each against a server of its own:
#
#   hooked  hooks.py puts real PNGs, offers and consistent numbers into bodies generated as valid; phases
#           examples, coverage, fuzzing, stateful; every check (schemathesis.toml) but "created resource not
#           found", which reads any 404 under a room just created as the room being gone, where it can name
#           something else missing (a recording's participant, who joins in no sequence)
#   plain   the schema alone: no hooks, schemathesis's default checks, a server with default settings, the admin
#           token as a plain header; phases examples, coverage, fuzzing; few cases (plain.toml)
#
#   Tests/Schemathesis/run.sh                      both; exit 0 only when neither reports a failure, else the worst
#   Tests/Schemathesis/run.sh --max-examples 200   more arguments go to the hooked run's `schemathesis run`
#
# The run re-executes itself inside `unshare --net` (a network namespace with only loopback: needs root), so the
# server and the generated traffic never leave this machine. It does not build: COHOST_BIN names the binary
# (default .build/debug/cohost). Installs schemathesis 4.32.5 with pip when it is missing.
#
# Environment: COHOST_BIN; COHOST_SCHEMATHESIS_SEED (default 20261127, both runs); COHOST_SCHEMATHESIS_EXAMPLES,
# test cases per operation and phase of the hooked run (default: schemathesis.toml's, 40 and 80 for sequences);
# COHOST_SCHEMATHESIS_PLAIN_EXAMPLES, the plain run's (default: plain.toml's); COHOST_SCHEMATHESIS_RUNS, which runs
# (default "hooked plain"; their output is printed in that order); COHOST_SCHEMATHESIS_KEEP=1 keeps the temporary
# directory (each run's server log, recordings and data) even when the runs pass.
#
# The Makefile's target (after the build, like test-webrtc):
#
#   test-schemathesis: build-tests
#   	COHOST_BIN=$$($(SWIFT) build --show-bin-path)/cohost Tests/Schemathesis/run.sh
#
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
version=4.32.5

if [ "${COHOST_SCHEMATHESIS_NETNS:-}" != 1 ]; then
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
    COHOST_SCHEMATHESIS_NETNS=1 exec unshare --net -- "$0" "$@"
fi
ip link set lo up

bin=${COHOST_BIN:-.build/debug/cohost}
case $bin in /*) ;; *) bin="$root/$bin" ;; esac
[ -x "$bin" ] || { echo "run.sh: no cohost binary at $bin (set COHOST_BIN or build first)" >&2; exit 2; }

start=$(date +%s)
work=$(mktemp -d /tmp/cohost-schemathesis.XXXXXX)
server=
worst=0
stop_server() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
        server=
    fi
}
finish() {
    status=$?
    [ "$status" -ne 0 ] || status=$worst
    stop_server
    if [ "$status" -ne 0 ] || [ "${COHOST_SCHEMATHESIS_KEEP:-}" = 1 ]; then
        echo "kept: $work (per run: server.log, recordings, data)"
    else
        rm -rf "$work"
    fi
    echo "schemathesis run: $(($(date +%s) - start)) s, exit $status"
    exit "$status"
}
trap finish EXIT
trap 'exit 130' INT TERM

# Only loopback exists in here: fixed ports cannot collide with anything outside.
port=7880
key=schemathesis
secret=0123456789abcdef0123456789abcdef

# start_server DIR [OPTION...]: `cohost serve` with recordings and data in DIR, started and answering.
start_server() {
    dir=$1
    shift
    mkdir -p "$dir"
    "$bin" serve --http "127.0.0.1:$port" --rtp-port "$((port + 2))" --keys "$key:$secret" --web-dir "$root/web" \
        --recordings-dir "$dir/recordings" --media-dir "$dir/media" --data-dir "$dir/data" --srt-port "$((port + 5))" --rtmp-port "$((port + 6))" \
        "$@" >"$dir/server.log" 2>&1 &
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
        cat "$dir/server.log" >&2
        exit 1
    fi
}

# An admin token for every room, signed with the server's key; `cohost token`'s lifetime (an hour) is within the
# default max_token_ttl.
admin_token() {
    "$bin" token --key "$key" --secret "$secret" --room '*' --user schemathesis-admin --admin
}

# measured NAME COMMAND...: runs one schemathesis run, prints its time and exit code, keeps the worst code.
measured() {
    name=$1
    shift
    began=$(date +%s)
    code=0
    "$@" || code=$?
    [ "$code" -le "$worst" ] || worst=$code
    echo "schemathesis run ($name): $(($(date +%s) - began)) s, exit $code"
}

seed=${COHOST_SCHEMATHESIS_SEED:-20261127}

hooked() {
    SCHEMATHESIS_HOOKS="$here/hooks.py" PYTHONDONTWRITEBYTECODE=1 \
        schemathesis --config-file "$here/schemathesis.toml" run "$root/protocol/openapi.yaml" \
        --url "http://127.0.0.1:$port" \
        --phases examples,coverage,fuzzing,stateful \
        --checks all \
        --exclude-checks ensure_resource_availability \
        --seed "$seed" \
        ${COHOST_SCHEMATHESIS_EXAMPLES:+--max-examples "$COHOST_SCHEMATHESIS_EXAMPLES"} \
        --generation-database none \
        --workers 1 \
        "$@"
}

# No hooks and no --checks: what schemathesis does with the schema as it stands.
plain() {
    PYTHONDONTWRITEBYTECODE=1 \
        schemathesis --config-file "$here/plain.toml" run "$root/protocol/openapi.yaml" \
        --url "http://127.0.0.1:$port" \
        --header "Authorization: Bearer $(admin_token)" \
        --phases examples,coverage,fuzzing \
        --seed "$seed" \
        ${COHOST_SCHEMATHESIS_PLAIN_EXAMPLES:+--max-examples "$COHOST_SCHEMATHESIS_PLAIN_EXAMPLES"} \
        --generation-database none \
        --workers 1
}

# one_run NAME: one run against a server of its own (in a subshell: its own port, server and exit code).
one_run() {
    name=$1
    shift
    case $name in
    hooked)
        # A participant's join does not create a room (the default with keys; see RoomTokens in hooks.py).
        # Outputs to this machine (the push ports' own srt:// and rtmp:// URLs are loopback) allowed.
        start_server "$work/hooked" --auto-create-rooms false --output-hosts 127.0.0.1
        # hooks.py sends this admin token, and signs participant tokens for joins with the same key.
        COHOST_SCHEMATHESIS_ADMIN_TOKEN=$(admin_token)
        export COHOST_SCHEMATHESIS_ADMIN_TOKEN COHOST_SCHEMATHESIS_KEY="$key" COHOST_SCHEMATHESIS_SECRET="$secret"
        cd "$work/hooked"
        measured hooked hooked "$@"
        ;;
    plain)
        # Every setting that shapes the API at its default (max_token_ttl 86400, auto_create_rooms, ...).
        start_server "$work/plain"
        cd "$work/plain"
        measured plain plain
        ;;
    esac
    stop_server
    return "$worst"
}

# The runs go side by side, each on ports of its own (7880, 7890, ...): each is one Python process against a
# mostly idle server, so two share this machine's cores; their output is printed whole, one after the other.
runs=
n=0
for run in ${COHOST_SCHEMATHESIS_RUNS:-hooked plain}; do
    case $run in
    hooked | plain) ;;
    *)
        echo "run.sh: COHOST_SCHEMATHESIS_RUNS names '$run'; the runs are hooked and plain" >&2
        exit 2
        ;;
    esac
    port=$((7880 + 10 * n))
    n=$((n + 1))
    mkdir -p "$work/$run"
    (
        trap - EXIT
        one_run "$run" "$@"
    ) >"$work/$run.out" 2>&1 &
    runs="$runs $run:$!"
done
for entry in $runs; do
    code=0
    wait "${entry#*:}" || code=$?
    cat "$work/${entry%%:*}.out"
    [ "$code" -le "$worst" ] || worst=$code
done
