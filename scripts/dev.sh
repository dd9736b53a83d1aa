#!/usr/bin/env bash
# MicroCoder Studio developer entry point: `scripts/dev.sh bootstrap|demo|test|services`.
# `make demo` and `make test` call this. Idempotent: re-running skips what is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=${VENV:-$ROOT/.venv}
PY=$VENV/bin/python

log() { printf '\033[1m[microcoder]\033[0m %s\n' "$*"; }

need_root_or_sudo() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }

install_debian_packages() {
  # bubblewrap: the judge's sandbox; chromium: headless browser tests.
  local missing=()
  command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  # gcc/g++: the judge compiles C and C++ solutions and checker programs.
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  # libseccomp2: the seccomp filter of judged programs (loaded through the PyPI package pyseccomp).
  ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2' || missing+=(libseccomp2)
  # npm (pulls nodejs): installs the front-end packages of package.json (KaTeX) into node_modules/.
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  if [ ${#missing[@]} -gt 0 ]; then
    if command -v apt-get >/dev/null 2>&1; then
      log "installing Debian packages: ${missing[*]}"
      need_root_or_sudo apt-get update -qq || true
      need_root_or_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
        || log "WARNING: could not install ${missing[*]} (the judge falls back to rlimits; browser tests skip)"
    else
      log "WARNING: no apt-get; please install: ${missing[*]}"
    fi
  fi
}

bootstrap() {
  install_debian_packages
  if [ ! -x "$PY" ]; then
    log "creating virtualenv in $VENV"
    python3 -m venv "$VENV"
  fi
  local stamp="$VENV/.requirements.sha256"
  local want
  want=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    log "installing Python requirements (torch CPU build pinned)"
    "$PY" -m pip install -q --upgrade pip
    # torch first, alone, so no resolver can swap in a CUDA build for another package's sake.
    "$PY" -m pip install -q "torch==2.13.0"
    "$PY" -m pip install -q -r requirements-dev.txt
    echo "$want" > "$stamp"
  fi
  install_node_packages
}

install_node_packages() {
  # Front-end packages (package.json, locked by package-lock.json) served as static files under
  # /static/vendor/. Skipped while node_modules/ was installed from this very package.json + lock.
  if ! command -v npm >/dev/null 2>&1; then
    log "WARNING: no npm; pages show math as TeX source until package.json is installed (apt-get install npm)"
    return 0
  fi
  local stamp=node_modules/.microcoder.sha256 want
  want=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  log "installing front-end packages (npm ci: KaTeX)"
  npm ci --prefer-offline --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
}

pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

services() {
  # Start the local PostgreSQL and Redis when they are installed but stopped.
  if command -v pg_ctlcluster >/dev/null 2>&1 && ! pg_up; then
    log "starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
    for _ in $(seq 1 30); do pg_up && break; sleep 1; done
  fi
  if command -v redis-server >/dev/null 2>&1 && ! redis_up; then
    log "starting Redis"
    mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
    for _ in $(seq 1 30); do redis_up && break; sleep 1; done
  fi
}

demo_env() {
  # Use the real stack when it is on this machine, else the embedded default (SQLite, in-process tasks).
  if [ -z "${DATABASE_URL:-}" ] && pg_up; then
    psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='microcoder'" 2>/dev/null | grep -q 1 \
      || createdb -h 127.0.0.1 -U postgres microcoder 2>/dev/null || true
    psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='microcoder'" 2>/dev/null | grep -q 1 \
      && export DATABASE_URL=postgresql://postgres@127.0.0.1:5432/microcoder
  fi
  if [ -z "${REDIS_URL:-}" ] && redis_up; then export REDIS_URL=redis://127.0.0.1:6379/0; fi
  export DJANGO_DEBUG=${DJANGO_DEBUG:-0}  # debug pages only when asked (DJANGO_DEBUG=1 make demo)
}

demo() {
  bootstrap
  services
  demo_env
  local port=${PORT:-8000}
  log "database: ${DATABASE_URL:-SQLite (var/db.sqlite3)}; broker: ${REDIS_URL:-in-process}"
  "$PY" manage.py migrate --noinput
  "$PY" manage.py collectstatic --noinput -v 0
  "$PY" manage.py demo
  local pids=()
  if [ -n "${REDIS_URL:-}" ]; then
    log "starting a Celery worker (queues default, scoring, evaluate, gpu)"
    "$VENV/bin/celery" -A webapp worker -Q default,scoring,evaluate,gpu -c 2 --loglevel=INFO \
      > var/celery.log 2>&1 &
    pids+=($!)
  fi
  trap 'kill ${pids[*]:-} 2>/dev/null || true' EXIT INT TERM
  log "MicroCoder Studio: http://127.0.0.1:${port}/  (log in as admin / microcoder-admin, or curator / microcoder-curator, trainer / microcoder-trainer)"
  "$VENV/bin/daphne" -b 127.0.0.1 -p "$port" webapp.asgi:application
}

test_all() {
  bootstrap
  services
  log "ruff"
  "$VENV/bin/ruff" check .
  log "mypy"
  "$VENV/bin/mypy" evaluator training curation webapp
  log "pytest (database: ${DATABASE_URL:-SQLite}; redis: ${REDIS_URL:-none})"
  "$VENV/bin/pytest" "$@"
}

case "${1:-}" in
  bootstrap) bootstrap ;;
  services) services ;;
  demo) shift; demo "$@" ;;
  test) shift; test_all "$@" ;;
  *) echo "usage: scripts/dev.sh bootstrap|services|demo|test [pytest args]" >&2; exit 2 ;;
esac
