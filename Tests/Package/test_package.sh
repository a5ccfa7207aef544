#!/usr/bin/env bash
# The Debian package as an operator meets it (issue 26). Called by ops/test after the Swift tests; runs alone too:
#   Tests/Package/test_package.sh
# 1. ops/package builds gatehouse_<version>_<arch>.deb from the release build; lintian passes on it.
# 2. Unpacked with dpkg-deb -x into a temporary root and run from there with an empty environment, from a folder
#    outside the source tree: init, demo seed, serve (GET / and a login), health. The man page renders with man -l;
#    the bash and zsh completions load.
# 3. Installed for real with apt-get (this machine is disposable): the gatehouse user, /var/lib/gatehouse 0700, the
#    units verify at their installed paths, `gatehouse --version` runs as gatehouse; then purged again.
set -euo pipefail
source "$(dirname "$0")/../../ops/lib/setup.sh"
cd "$GATEHOUSE_ROOT"
ensure_debs dpkg-dev lintian zsh man-db groff-base systemd curl

fail() { echo "package test: FAILED: $*" >&2; exit 1; }
step() { echo "== package: $*" >&2; }
started=$(date +%s)

work=$(mktemp -d /tmp/gatehouse-package-test.XXXXXX)
server_pid=""
installed_by_test=0
user_existed=0
getent passwd gatehouse >/dev/null && user_existed=1
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  if [ "$installed_by_test" = 1 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq gatehouse >/dev/null 2>&1 || true
    # Debian keeps system users on purge; the test removes the one it made, leaving the machine as it found it.
    [ "$user_existed" = 0 ] && { userdel gatehouse 2>/dev/null || true; groupdel gatehouse 2>/dev/null || true; }
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step "ops/package"
deb=$(ops/package "$work/out" | tail -1)
[ -f "$deb" ] || fail "ops/package made no .deb"
case "$(basename "$deb")" in gatehouse_*_"$(dpkg --print-architecture)".deb) ;; *) fail "unexpected name $deb" ;; esac
dpkg-deb --info "$deb" | sed -n '/Package:/,$p' >&2

step "lintian"
lintian --fail-on error,warning --tag-display-limit 0 "$deb" >&2 || fail "lintian"

step "dpkg-deb -x"
root="$work/root"
dpkg-deb -x "$deb" "$root"
bin="$root/usr/bin/gatehouse"
for path in usr/bin/gatehouse lib/systemd/system/gatehouse-console.service lib/systemd/system/gatehouse-health.service \
    lib/systemd/system/gatehouse-health.timer usr/share/gatehouse/cron/gatehouse-health \
    usr/share/gatehouse/prometheus/gatehouse-alerts.yml usr/share/doc/gatehouse/copyright \
    usr/share/doc/gatehouse/changelog.Debian.gz usr/share/doc/gatehouse/runbooks/rotate-apple-key.md \
    usr/share/man/man1/gatehouse.1.gz usr/share/bash-completion/completions/gatehouse \
    usr/share/zsh/vendor-completions/_gatehouse usr/share/fish/vendor_completions.d/gatehouse.fish; do
  [ -f "$root/$path" ] || fail "the package has no /$path"
done
if ldd "$bin" | grep -E 'libswift|libFoundation|libdispatch|not found'; then fail "the binary needs libraries the package does not bring"; fi

# From here on: no environment variable, no source tree; cwd and HOME in a scratch folder.
run_dir="$work/run"
mkdir -p "$run_dir/home"
gh() { (cd "$run_dir" && env -i PATH=/usr/bin:/bin HOME="$run_dir/home" "$bin" "$@"); }
store="$run_dir/auth.sqlite"
printf 'a long enough password\n' > "$run_dir/pw"

step "init, demo seed, health from the unpacked binary"
gh --version
gh init --store "$store" --admin ops --admin-password-file "$run_dir/pw" >"$run_dir/init.out" 2>&1 || { cat "$run_dir/init.out" >&2; fail "init"; }
grep -q "applied 0009_gates" "$run_dir/init.out" || fail "init applied no migrations: $(cat "$run_dir/init.out")"
gh demo seed --store "$store" --users 200 -q || fail "demo seed"
gh users search --store "$store" a --json >/dev/null || fail "users search"
set +e
gh health --store "$store" --json >"$run_dir/health.json"
health_status=$?
set -e
[ "$health_status" -le 2 ] || fail "health exited $health_status (UNKNOWN): $(cat "$run_dir/health.json")"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["checks"], r' "$run_dir/health.json" || fail "health JSON"

step "serve: GET / and a login"
(cd "$run_dir" && exec env -i PATH=/usr/bin:/bin HOME="$run_dir/home" "$bin" serve --store "$store" --listen 127.0.0.1:0) \
  >"$run_dir/serve.out" 2>"$run_dir/serve.err" &
server_pid=$!
url=""
for _ in $(seq 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/' "$run_dir/serve.out" 2>/dev/null | head -1 || true)
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || fail "serve printed no URL: $(cat "$run_dir/serve.err")"
curl -fsS "$url" -o "$run_dir/index.html" || fail "GET /"
cmp -s "$run_dir/index.html" Public/index.html || fail "GET / is not Public/index.html"
token=$(curl -fsS -H 'Content-Type: application/json' -d '{"username":"ops","password":"a long enough password"}' "${url}api/auth/login" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])') || fail "login"
users=$(curl -fsS -H "Authorization: Bearer $token" "${url}api/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counts"]["users"])')
[ "$users" = 200 ] || fail "/api/status counts $users users, not 200"
kill "$server_pid"; wait "$server_pid" || true; server_pid=""

step "man page and completions"
warnings=$(MANWIDTH=80 man --warnings -l "$root/usr/share/man/man1/gatehouse.1.gz" 2>&1 >/dev/null)
[ -z "$warnings" ] || fail "man -l warns: $warnings"
MANWIDTH=80 man -l "$root/usr/share/man/man1/gatehouse.1.gz" 2>/dev/null | grep -q "gatehouse users search" || fail "the man page lacks users search"
bash --norc -c "source '$root/usr/share/bash-completion/completions/gatehouse' && complete -p gatehouse" | grep -q _gatehouse \
  || fail "the bash completion does not load"
zsh_out=$(cd "$run_dir" && HOME="$run_dir/home" zsh -f -c "autoload -U compinit; compinit -u -d '$run_dir/zcompdump'; \
  source '$root/usr/share/zsh/vendor-completions/_gatehouse'; print -r -- \$_comps[gatehouse]" 2>&1)
[ "$zsh_out" = _gatehouse ] || fail "the zsh completion does not load: $zsh_out"
if command -v fish >/dev/null; then fish -n "$root/usr/share/fish/vendor_completions.d/gatehouse.fish" || fail "fish"; fi

step "apt-get install, as the operator does"
installed_by_test=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >&2 || fail "apt-get install"
getent passwd gatehouse >/dev/null || fail "no gatehouse user"
[ "$(stat -c '%a %U %G' /var/lib/gatehouse)" = "700 gatehouse gatehouse" ] || fail "/var/lib/gatehouse is $(stat -c '%a %U %G' /var/lib/gatehouse)"
runuser -u gatehouse -- gatehouse --version || fail "gatehouse --version as the gatehouse user"
[ "$(command -v gatehouse)" = /usr/bin/gatehouse ] || fail "gatehouse is not /usr/bin/gatehouse on PATH"
verify=$(systemd-analyze verify --man=no /lib/systemd/system/gatehouse-console.service /lib/systemd/system/gatehouse-health.service \
  /lib/systemd/system/gatehouse-health.timer 2>&1 | grep gatehouse || true)
[ -z "$verify" ] || fail "systemd-analyze verify: $verify"
if command -v systemctl >/dev/null && systemctl is-enabled gatehouse-console.service >/dev/null 2>&1; then
  fail "the package enabled gatehouse-console.service"
fi
# The store the units use, made by the gatehouse user, under the folder only it may enter.
runuser -u gatehouse -- gatehouse init --store /var/lib/gatehouse/auth.sqlite --admin ops --admin-password-file - <"$run_dir/pw" >/dev/null \
  || fail "init as the gatehouse user"
[ "$(stat -c '%a %U' /var/lib/gatehouse/auth.sqlite.key)" = "600 gatehouse" ] || fail "the key file is not 0600 gatehouse"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq gatehouse >&2 || fail "apt-get purge"
[ ! -e /usr/bin/gatehouse ] || fail "purge left /usr/bin/gatehouse"
[ -f /var/lib/gatehouse/auth.sqlite ] || fail "purge deleted the store"
rm -rf /var/lib/gatehouse
# installed_by_test stays 1: the EXIT trap removes the gatehouse user this test made (purge keeps it, as Debian does).

echo "== package: ok ($(( $(date +%s) - started )) s)" >&2
