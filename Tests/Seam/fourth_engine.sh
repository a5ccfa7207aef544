#!/usr/bin/env bash
# A fourth engine is a written list (Sources/README.md, "Adding an engine"): this adds the toy engine kept in
# Tests/Seam/CSVEngine/ (a read-only CSV snapshot) to a copy of the tree exactly as the list says, then checks that
#   1. the existing files it changed are the three the list names, and nothing else;
#   2. the tree builds with it;
#   3. every read job answers on a CSV snapshot as on the SQLite store it was exported from.
# The copy is built where the tree is (a private mount over it, so SwiftPM's build folder is reused; a private /tmp, so
# SwiftPM's build lock is the copy's own): run as root.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${1:-}" != --inside ]; then
    work=$(mktemp -d /var/tmp/gatehouse-fourth-engine.XXXXXX)
    trap 'rm -rf "$work"' EXIT
    cp -a "$root/." "$work/tree"
    mkdir -m 1777 "$work/tmp"
    unshare -m bash -c 'mount --bind "$1" "$2" && mount --bind "$3/tmp" /tmp && cd "$2" && exec "$2/Tests/Seam/fourth_engine.sh" --inside "$3"' \
        _ "$work/tree" "$root" "$work"
    exit
fi
work=$2
cd "$root"
fail() { echo "fourth engine: $*" >&2; exit 1; }

echo "== the engine's folder and the three registration points" >&2
mkdir -p Sources/Engines/CSV
cp Tests/Seam/CSVEngine/*.swift Sources/Engines/CSV/
python3 - <<'PY'
import re
def edit(path, old, new):
    text = open(path).read()
    if old not in text: raise SystemExit(f"{path}: the place to register the engine moved: {old!r}")
    open(path, 'w').write(text.replace(old, new, 1))
edit('Package.swift', '        .executableTarget(name: "gatehouse", dependencies: [',
     '        .target(name: "CSVEngine", dependencies: ["Storage", "Gatehouse", "SQLiteEngine"], path: "Sources/Engines/CSV"),\n'
     '        .executableTarget(name: "gatehouse", dependencies: ["CSVEngine", ')
edit('Package.swift', '.target(name: "TestEngines", dependencies: [', '.target(name: "TestEngines", dependencies: ["CSVEngine", ')
edit('Sources/gatehouse/main.swift', 'import CProcess\n', 'import CProcess\nimport CSVEngine\n')
edit('Sources/gatehouse/main.swift', 'StoreEngines.register(', 'StoreEngines.register(CSVEngines.all + ')
edit('Tests/TestEngines/TestEngines.swift', 'import D1Engine\n', 'import CSVEngine\nimport D1Engine\n')
edit('Tests/TestEngines/TestEngines.swift', 'StoreEngines.register(', 'StoreEngines.register(CSVEngines.all + ')
PY
changed=$(git status --porcelain --untracked-files=normal | sort)
expected=$(printf '%s\n' ' M Package.swift' ' M Sources/gatehouse/main.swift' ' M Tests/TestEngines/TestEngines.swift' '?? Sources/Engines/CSV/' | sort)
[ "$changed" = "$expected" ] || fail "adding an engine changed more than the list says:
$changed"

echo "== swift build, with a fourth engine" >&2
if ! swift build > "$work/build.log" 2>&1; then
    grep -E 'error' "$work/build.log" | head -20 >&2
    fail "the tree does not build with the engine added"
fi
gatehouse="$root/.build/debug/gatehouse"

echo "== every read job on a CSV snapshot answers as on its SQLite store" >&2
store="$work/store.sqlite" snapshot="$work/snapshot"
export GATEHOUSE_KEY_DIR="$work/keys"
"$gatehouse" init --store "$store" >/dev/null
"$gatehouse" demo seed --store "$store" --users 400 >/dev/null
python3 - "$store" "$snapshot" <<'PY'
import csv, os, sqlite3, sys
store, folder = sys.argv[1:]
os.makedirs(folder)
db = sqlite3.connect(store)
objects = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid").fetchall()
virtual = [name for kind, name, _, sql in objects if sql.upper().startswith('CREATE VIRTUAL')]
# The name search index (a virtual table, its shadow tables and triggers) is the store's own and stays out.
kept = [(kind, name, table, sql) for kind, name, table, sql in objects
        if kind in ('table', 'index') and not sql.upper().startswith('CREATE VIRTUAL')
        and not any(name.startswith(v + '_') or table.startswith(v + '_') for v in virtual)]
with open(os.path.join(folder, 'schema.sql'), 'w') as out:
    for *_, sql in kept: out.write(sql + ';\n')
for kind, name, _, _ in kept:
    if kind != 'table': continue
    cursor = db.execute(f'SELECT * FROM "{name}"')
    with open(os.path.join(folder, name + '.csv'), 'w', newline='') as out:
        writer = csv.writer(out, lineterminator='\n')
        writer.writerow([column[0] for column in cursor.description])
        for row in cursor: writer.writerow(['\\N' if value is None else value for value in row])
PY
first=$("$gatehouse" users search a --store "$store" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["users"][0]["id"])')
jobs=("status --json" "users search a --json" "users search @example --json" "users show $first --json" "users duplicates --json"
      "accounts check --json" "policy show --json" "gates show --json" "audit verify" "merge list --json")
# What a job says about when it ran is left out: the two runs are a moment apart.
now() { sed -E 's/"(checkedAt|generatedAt|at|now)" : "[^"]*"/"\1" : "…"/g'; }
for job in "${jobs[@]}"; do
    # shellcheck disable=SC2086
    on_sqlite=$("$gatehouse" $job --store "$store" 2>&1 | sed "s#$store#STORE#g" | now) || true
    # shellcheck disable=SC2086
    on_csv=$("$gatehouse" $job --store "csv:$snapshot" 2>&1 | sed "s#csv:$snapshot#STORE#g" | now) || true
    [ -n "$on_sqlite" ] || fail "gatehouse $job printed nothing on the SQLite store"
    if [ "$on_sqlite" != "$on_csv" ]; then
        diff <(echo "$on_sqlite") <(echo "$on_csv") | tail -8 >&2
        fail "gatehouse $job answers otherwise on the CSV snapshot"
    fi
done
"$gatehouse" policy set linkSocial.allowDifferentEmails true --for 1h --reason seam --store "csv:$snapshot" >/dev/null 2>&1 \
    && fail "a write on the read-only CSV snapshot succeeded"
echo "fourth engine: added in its own folder plus the three registration points; ${#jobs[@]} read jobs answer alike" >&2
