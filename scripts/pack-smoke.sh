#!/usr/bin/env bash
# Packs the library, installs the tarball into a fresh project and runs a script that wires the
# inversify container and compacts: proves `import ... from 'session-compaction'` works for a user.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
tarball="$(npm pack --silent --pack-destination "$tmp" | tail -n 1)"
cd "$tmp"
npm init -y >/dev/null
npm pkg set type=module >/dev/null
npm install --no-audit --no-fund --silent "$tmp/$tarball" inversify@^7 reflect-metadata >/dev/null
cp "$root/scripts/pack-smoke.mjs" ./smoke.mjs
node smoke.mjs
# The published CLI resolves and starts from the installed package.
npx --no-install session-compaction --help | grep -q "bench" && echo "pack smoke test: session-compaction CLI — ok"
# An admin command opens a store through the installed package (schema created, then verified).
npx --no-install session-compaction migrate --url sqlite:./smoke.db --json | grep -q '"appliedNow"' &&
  npx --no-install session-compaction verify --all --url sqlite:./smoke.db >/dev/null &&
  echo "pack smoke test: session-compaction migrate / verify — ok"
