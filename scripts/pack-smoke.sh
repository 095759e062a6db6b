#!/usr/bin/env bash
# A new user's first minutes, on the packed tarball: for each supported inversify major, a fresh project runs
# the README's install line verbatim (tarball in place of the package name), the README quick start, the
# SQLite default via DI, `tsc --strict` WITHOUT skipLibCheck over a file importing every root name, a root
# import that must load no driver, and the installed CLI.
#
#   bash scripts/pack-smoke.sh            # packs through `npm pack`, which builds dist/ (prepare)
#   bash scripts/pack-smoke.sh --built    # dist/ is this checkout's fresh build (CI: npm ci ran prepare)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
pack=(npm pack --silent --pack-destination "$tmp")
[ "${1:-}" != --built ] || pack+=(--ignore-scripts)
tarball="$tmp/$("${pack[@]}" | tail -n 1)"
install_line="$(grep -m1 '^npm install session-compaction' README.md)"
[ -n "$install_line" ] || { echo "pack smoke test: README has no 'npm install session-compaction' line" >&2; exit 1; }

# better-sqlite3 compiles SQLite from source (about a minute) when its prebuilt binary cannot be downloaded.
# This checkout's compiled binary, saved as a local prebuild, serves both installs instead: prebuild-install
# finds it only under the same better-sqlite3 version and Node ABI, and anything else compiles as before.
# SQLITE_PREBUILDS: a directory of such prebuilds to use and add to (CI keeps one between runs).
prebuilds="${SQLITE_PREBUILDS:-$tmp/prebuilds}"
node scripts/sqlite-prebuild.mjs "$prebuilds" >/dev/null || echo "pack smoke test: no compiled better-sqlite3 to reuse"

# Every root name, values imported as values and types with `type`, compiled below against each install.
exports="$(node scripts/list-exports.mjs src/index.ts 2>/dev/null)"
count="$(echo "$exports" | wc -l)"
node -e "
  const lines = process.argv[1].split('\n').map((l) => l.split(/\s+/));
  const values = lines.filter((l) => l[0] === 'value').map((l) => l[1]);
  const types = lines.filter((l) => l[0] === 'type').map((l) => l[1]);
  require('fs').writeFileSync(process.argv[2],
    'import { ' + [...values, ...types.map((n) => 'type ' + n)].join(', ') + \" } from 'session-compaction';\n\" +
    'export const values = [' + values.join(', ') + '];\n' + types.map((n) => 'export type T_' + n + ' = ' + n + ';').join('\n') + '\n');
" "$exports" "$tmp/names.ts"
# The project's own TypeScript and Node types (the version CI compiles with), not a third install per major.
tsc="$root/node_modules/typescript/bin/tsc"

for major in 8 7; do
  project="$tmp/inversify$major"
  mkdir -p "$project" && cd "$project"
  npm init -y >/dev/null
  npm pkg set type=module >/dev/null
  # The README's line, verbatim, with the tarball for the package and the given inversify major.
  line="${install_line/session-compaction/$tarball}"
  [ "$major" = 8 ] || line="${line/ inversify / inversify@^$major }"
  echo "pack smoke test (inversify $major): $line"
  (export npm_config_better_sqlite3_local_prebuilds="$prebuilds" && eval "$line --no-audit --no-fund --silent") >/dev/null
  installed="$(node -p "JSON.parse(require('fs').readFileSync('node_modules/inversify/package.json', 'utf8')).version")"
  [ "${installed%%.*}" = "$major" ] || { echo "expected inversify $major, installed $installed" >&2; exit 1; }

  # The README quick start, as written.
  awk '/^## Quick start/{q=1} q&&/^```ts/{f=1;next} f&&/^```/{exit} f' "$root/README.md" > quickstart.mjs
  # Plain JavaScript: drop the type-only import (inline or on its own line) and the type argument.
  sed -i -e 's/, *type SessionService//' -e '/^ *type SessionService,\{0,1\}$/d' -e 's/<SessionService>//' quickstart.mjs
  # A failed check must fail the script (an `a && b` list that fails does not stop `set -e`).
  node quickstart.mjs | grep -q 'archived 10, active 7, total 17' || { echo "pack smoke test: README quick start failed" >&2; exit 1; }
  echo "pack smoke test: README quick start — ok"
  cp "$root/scripts/pack-smoke/compact.mjs" "$root/scripts/pack-smoke/root-import.mjs" .
  node compact.mjs
  node root-import.mjs

  # Every root name compiles under --strict without skipLibCheck, against this install's inversify.
  cp "$tmp/names.ts" .
  node "$tsc" --strict --noEmit --skipLibCheck false --module nodenext --moduleResolution nodenext --target es2022 \
    --types node --typeRoots "$root/node_modules/@types" names.ts
  echo "pack smoke test: tsc --strict without skipLibCheck over all $count root names — ok"
  npx --no-install session-compaction --help | grep -q "bench" || { echo "pack smoke test: session-compaction CLI failed" >&2; exit 1; }
  echo "pack smoke test: session-compaction CLI — ok"
  # An admin command opens a store through the installed package (schema created, then verified).
  npx --no-install session-compaction migrate --url sqlite:./admin.db --json | grep -q '"appliedNow"' || {
    echo "pack smoke test: session-compaction migrate failed" >&2
    exit 1
  }
  npx --no-install session-compaction verify --all --url sqlite:./admin.db >/dev/null
  echo "pack smoke test: session-compaction migrate / verify — ok"
done
