#!/usr/bin/env bash
# Checks the web client's modules (web/*.js) with Debian's eslint and web/.eslintrc.json: undefined names, unused
# variables and the rest of eslint:recommended, and one formatting style (4-space indentation, at most 120 columns,
# double quotes, semicolons, trailing commas in multi-line lists, spacing). Installs eslint when it is missing
# (scripts/ensure-packages.sh --lint). Exits non-zero on any finding. `make lint` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-packages.sh --lint
# Debian's node modules live in /usr/share/nodejs, which a Node.js from elsewhere (NodeSource) does not search.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
exec eslint --no-eslintrc --config web/.eslintrc.json --max-warnings 0 web/*.js
