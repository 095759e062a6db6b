#!/usr/bin/env bash
# A new user's first minutes, on the packed tarballs (the library and its two tools, session-compaction-cli and
# session-compaction-bench): for each supported inversify major, a fresh project runs the README's install line
# verbatim (tarball in place of the package name), the README quick start, the SQLite default via DI,
# `tsc --strict` WITHOUT skipLibCheck over a file importing every root name, a root import that must load no
# driver, the installed CLI (migrate, verify, a read that must not create a store) and the bench on its shipped
# sample, each with one command.
#
#   bash scripts/pack-smoke.sh            # packs through `npm pack`, which builds every dist/ (prepare, prepack)
#   bash scripts/pack-smoke.sh --built    # the dist/ folders are this checkout's fresh build (CI: npm ci ran prepare)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$root"
pack=(npm pack --silent --pack-destination "$tmp" --workspaces --include-workspace-root)
[ "${1:-}" != --built ] || pack+=(--ignore-scripts)
packed="$("${pack[@]}")"
tarball_of() {
  local file
  file="$(echo "$packed" | grep -E "^$1-[0-9]")" || { echo "pack smoke test: no tarball for $1 in: $packed" >&2; exit 1; }
  echo "$tmp/$file"
}
tarball="$(tarball_of session-compaction)"
cli_tarball="$(tarball_of session-compaction-cli)"
bench_tarball="$(tarball_of session-compaction-bench)"
# The library carries no tool: no bin, no CLI or bench code, none of their dependencies.
if tar -tzf "$tarball" | grep -qE '^package/dist/(cli|bench)/'; then
  echo "pack smoke test: the library tarball still holds the CLI or the bench" >&2
  exit 1
fi
tar -xzOf "$tarball" package/package.json | node -e "
  const p = JSON.parse(require('fs').readFileSync(0, 'utf8'));
  const leaked = ['commander', 'cli-progress'].filter((d) => d in (p.dependencies ?? {}));
  if (p.bin !== undefined || leaked.length > 0) { console.error('pack smoke test: library bin/dependencies', p.bin, leaked); process.exit(1); }
"
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
  cp "$root"/scripts/pack-smoke/{compact.mjs,root-import.mjs,require.cjs,config-di.mjs,redis-close.mjs,otel.mjs,local-embeddings.mjs} .
  node compact.mjs
  node root-import.mjs
  node local-embeddings.mjs
  # A CommonJS application: require() of the root and of a subpath.
  node require.cjs
  # The configuration file through DI (zod and yaml are the package's own dependencies).
  node config-di.mjs
  # The Redis store through DI: the process must end by itself after closeSessionCompaction.
  if [ "$major" = 8 ]; then
    npm install ioredis --no-audit --no-fund --silent >/dev/null
    status=0
    timeout 60 node redis-close.mjs || status=$?
    if [ "$status" = 3 ]; then
      [ "${CI:-}" != true ] || { echo "pack smoke test: Redis unreachable, and CI=true requires it" >&2; exit 1; }
      echo "pack smoke test: Redis store through DI — skipped (no Redis at ${REDIS_URL:-redis://127.0.0.1:6379})"
    elif [ "$status" != 0 ]; then
      echo "pack smoke test: the Redis script did not end by itself after closeSessionCompaction (exit $status)" >&2
      exit 1
    fi
    # The application's own, older OpenTelemetry API and SDK receive the library's spans (a peer dependency).
    npm install @opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-base@1.30.1 --no-audit --no-fund --silent >/dev/null
    node otel.mjs
  fi

  # Every root name compiles under --strict without skipLibCheck, against this install's inversify.
  cp "$tmp/names.ts" .
  node "$tsc" --strict --noEmit --skipLibCheck false --module nodenext --moduleResolution nodenext --target es2022 \
    --types node --typeRoots "$root/node_modules/@types" names.ts
  echo "pack smoke test: tsc --strict without skipLibCheck over all $count root names — ok"
  # The tools, installed as the README says, with this major's library already in place (their peer).
  npm install --save-dev "$cli_tarball" "$bench_tarball" --no-audit --no-fund --silent >/dev/null
  npx --no-install session-compaction --help | grep -q "migrate" || { echo "pack smoke test: session-compaction CLI failed" >&2; exit 1; }
  echo "pack smoke test: session-compaction CLI — ok"
  # A command asked to read a store that is not there fails, names migrate, and creates nothing.
  if npx --no-install session-compaction sessions list --url sqlite:./missing.db 2>missing.err; then
    echo "pack smoke test: sessions list on a missing store succeeded" >&2
    exit 1
  fi
  grep -q 'session-compaction migrate --url sqlite:./missing.db' missing.err && [ ! -e missing.db ] || {
    echo "pack smoke test: sessions list on a missing store: $(cat missing.err)" >&2
    exit 1
  }
  # An admin command opens a store through the installed package (schema created, then verified).
  npx --no-install session-compaction migrate --url sqlite:./admin.db --json | grep -q '"appliedNow"' || {
    echo "pack smoke test: session-compaction migrate failed" >&2
    exit 1
  }
  npx --no-install session-compaction verify --all --url sqlite:./admin.db >/dev/null
  echo "pack smoke test: session-compaction migrate / verify — ok"
  # The configuration file through the CLI: compact the store config-di.mjs wrote with the file's profile.
  npx --no-install session-compaction compact "$(cat configured-session.txt)" --url sqlite:./configured.db \
    --config session-compaction.yaml --profile short --force --dry-run --json >config-cli.out || {
    echo "pack smoke test: session-compaction compact --config failed: $(cat config-cli.out)" >&2
    exit 1
  }
  echo "pack smoke test: configuration file through the CLI — ok"
  # The bench on the sample it ships, in one command (no DI involved: once is enough).
  if [ "$major" = 8 ]; then
    npx --no-install session-compaction-bench --quick --no-scaling --out bench-out >bench.out 2>bench.err || true
    grep -q '^Headline: ' bench.out && [ -s bench-out/results.md ] && [ -s bench-out/results.json ] || {
      echo "pack smoke test: session-compaction-bench failed: $(cat bench.out bench.err)" >&2
      exit 1
    }
    echo "pack smoke test: session-compaction-bench on its shipped sample — ok"
  fi
done
