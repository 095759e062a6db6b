#!/usr/bin/env bash
# A new user's first minutes, on the packed tarball: for each supported inversify major, a fresh project runs
# the README's install line verbatim (tarball in place of the package name), the README quick start, the
# SQLite default via DI, `tsc --strict` WITHOUT skipLibCheck over a file importing every root name, a root
# import that must load no driver, and the installed CLI.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
tarball="$tmp/$(npm pack --silent --pack-destination "$tmp" | tail -n 1)"
install_line="$(grep -m1 '^npm install session-compaction' README.md)"
[ -n "$install_line" ] || { echo "pack smoke test: README has no 'npm install session-compaction' line" >&2; exit 1; }
typescript_version="$(node -p "require('./node_modules/typescript/package.json').version")"
names="$(node scripts/list-exports.mjs src/index.ts 2>/dev/null | awk '{print $2}' | paste -sd, -)"

for major in 8 7; do
  project="$tmp/inversify$major"
  mkdir -p "$project" && cd "$project"
  npm init -y >/dev/null
  npm pkg set type=module >/dev/null
  # The README's line, verbatim, with the tarball for the package and the given inversify major.
  line="${install_line/session-compaction/$tarball}"
  [ "$major" = 8 ] || line="${line/ inversify / inversify@^$major }"
  echo "pack smoke test (inversify $major): $line"
  eval "$line --no-audit --no-fund --silent" >/dev/null
  installed="$(node -p "JSON.parse(require('fs').readFileSync('node_modules/inversify/package.json', 'utf8')).version")"
  [ "${installed%%.*}" = "$major" ] || { echo "expected inversify $major, installed $installed" >&2; exit 1; }

  # The README quick start, as written.
  awk '/^## Quick start/{q=1} q&&/^```ts/{f=1;next} f&&/^```/{exit} f' "$root/README.md" > quickstart.mjs
  # Plain JavaScript: drop the type-only import (inline or on its own line) and the type argument.
  sed -i -e 's/, *type SessionService//' -e '/^ *type SessionService,\{0,1\}$/d' -e 's/<SessionService>//' quickstart.mjs
  # A failed check must fail the script (an `a && b` list that fails does not stop `set -e`).
  node quickstart.mjs | grep -q 'archived 10, active 6, total 16' || { echo "pack smoke test: README quick start failed" >&2; exit 1; }
  echo "pack smoke test: README quick start — ok"
  cp "$root/scripts/pack-smoke/compact.mjs" "$root/scripts/pack-smoke/root-import.mjs" .
  node compact.mjs
  node root-import.mjs

  # Every root name compiles under --strict without skipLibCheck.
  npm install --no-audit --no-fund --silent "typescript@$typescript_version" @types/node@20 >/dev/null
  echo "import { ${names} } from 'session-compaction'; export const all = [${names}];" | sed 's/, *}/ }/' > names.ts
  node -e "
    const fs = require('fs'); const names = '${names}'.split(',');
    const typeOnly = require('child_process').execFileSync(process.execPath, ['$root/scripts/list-exports.mjs', '$root/src/index.ts'], { encoding: 'utf8' })
      .split('\n').filter((l) => l.startsWith('type ')).map((l) => l.split(/\s+/)[1]);
    const values = names.filter((n) => !typeOnly.includes(n));
    fs.writeFileSync('names.ts', 'import { ' + names.map((n) => (typeOnly.includes(n) ? 'type ' + n : n)).join(', ') + \" } from 'session-compaction';\\n\" +
      'export const values = [' + values.join(', ') + '];\\n' + typeOnly.map((n) => 'export type T_' + n + ' = ' + n + (n.endsWith('Like') || true ? '' : '') + ';').join('\\n') + '\\n');
  "
  npx --no-install tsc --strict --noEmit --skipLibCheck false --module nodenext --moduleResolution nodenext --target es2022 --types node names.ts
  echo "pack smoke test: tsc --strict without skipLibCheck over all $(echo "$names" | tr ',' '\n' | wc -l) root names — ok"
  npx --no-install session-compaction --help | grep -q "bench" || { echo "pack smoke test: session-compaction CLI failed" >&2; exit 1; }
  echo "pack smoke test: session-compaction CLI — ok"
  # An admin command opens a store through the installed package (schema created, then verified).
  npx --no-install session-compaction migrate --url sqlite:./admin.db --json | grep -q '"appliedNow"' &&
    npx --no-install session-compaction verify --all --url sqlite:./admin.db >/dev/null &&
    echo "pack smoke test: session-compaction migrate / verify — ok"
done
