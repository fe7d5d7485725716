#!/usr/bin/env bash
# Checks the web client's modules (web/*.js) with Debian's eslint and web/.eslintrc.json: undefined names, unused
# variables and the rest of eslint:recommended, and one formatting style (4-space indentation, at most 120 columns,
# double quotes, semicolons, trailing commas in multi-line lists, spacing). Installs eslint when it is missing, as
# scripts/ensure-packages.sh does. Exits non-zero on any finding. `make lint` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
# eslint's default output (the "stylish" formatter) needs chalk, strip-ansi and text-table: only Recommends of the
# eslint package.
packages=(eslint node-chalk node-strip-ansi node-text-table)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Debian's node modules live in /usr/share/nodejs, which a Node.js from elsewhere (NodeSource) does not search.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
exec eslint --no-eslintrc --config web/.eslintrc.json --max-warnings 0 web/*.js
