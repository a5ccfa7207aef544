# Shared set-up for ops/console, ops/test and ops/bench: install what is missing, nothing else.
# Sourced, not run. Every function is idempotent and quiet when there is nothing to do.

GATEHOUSE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export GATEHOUSE_ROOT

# The toolchain lives in /opt/swift on the build machines; make sure it is on PATH.
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
  export PATH="/opt/swift/usr/bin:$PATH"
fi

apt_updated=0
# ensure_debs PKG...: installs the Debian packages that are not installed yet.
ensure_debs() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "ops: installing Debian packages: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  if [ $apt_updated -eq 0 ]; then
    $sudo apt-get update -qq >&2 || { echo "ops: apt-get update failed" >&2; return 1; }
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# The C libraries the product links against, and the tools to find them.
GATEHOUSE_BUILD_DEBS=(pkg-config libsqlite3-dev libssl-dev libmicrohttpd-dev)

ensure_build_deps() {
  ensure_debs "${GATEHOUSE_BUILD_DEBS[@]}"
  command -v swift >/dev/null 2>&1 || { echo "ops: the Swift toolchain is not installed (expected /opt/swift)" >&2; return 1; }
}

# ensure_venv: a Python virtual environment in .venv with the test requirements.
ensure_venv() {
  local venv="$GATEHOUSE_ROOT/.venv" req="$GATEHOUSE_ROOT/ops/requirements-test.txt"
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" >&2 || { ensure_debs python3-venv && python3 -m venv "$venv" >&2; }
  fi
  local stamp="$venv/.requirements.sha256"
  local want; want=$(sha256sum "$req" | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "ops: installing Python test requirements" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$req" >&2 && echo "$want" > "$stamp"
  fi
  export GATEHOUSE_TEST_PYTHON="$venv/bin/python"
}
