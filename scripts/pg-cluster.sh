#!/usr/bin/env bash
# Starts (or reuses) a throwaway PostgreSQL cluster for tests and benchmarks, installing
# PostgreSQL with apt-get when it is missing. Prints the superuser URL on stdout.
#   scripts/pg-cluster.sh start   → postgres://postgres@127.0.0.1:54329/postgres
#   scripts/pg-cluster.sh owner   → plinth_owner: a database owner as hosted PostgreSQL has
#                                   (CREATEROLE, no SUPERUSER), for a second run of the suite
#   scripts/pg-cluster.sh stop
# Over TCP the superuser and plinth_owner are trusted; every other role must give its password
# (scram-sha-256), so the API login Plinth makes for itself is tested as it logs in for real.
set -euo pipefail
PORT="${PLINTH_PG_PORT:-54329}"
DIR="${PLINTH_PG_DIR:-/tmp/plinth-pg-$PORT}"
log() { echo "[pg-cluster] $*" >&2; }

find_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  return 1
}

ensure_installed() {
  if find_bin >/dev/null; then return 0; fi
  local logf; logf="$(cd "$(dirname "$0")/.." && pwd)/.tmp/apt-postgresql.log"
  log "PostgreSQL not found: installing it with apt-get (output in $logf)"
  export DEBIAN_FRONTEND=noninteractive
  local SUDO=; [ "$(id -u)" != "0" ] && SUDO=sudo
  mkdir -p "$(dirname "$logf")"
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq postgresql; } >"$logf" 2>&1 || { tail -n 40 "$logf" >&2; log "apt-get install postgresql failed"; exit 1; }
  find_bin >/dev/null || { log "PostgreSQL install failed"; exit 1; }
}

as_pg() {
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Written at every start (and reloaded when running), so an older cluster directory gets it too.
write_hba() {
  local want; want=$(cat <<HBA
local all all trust
host all postgres 127.0.0.1/32 trust
host all plinth_owner 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
HBA
)
  if [ "$(cat "$DIR/pg_hba.conf" 2>/dev/null)" != "$want" ]; then
    printf '%s\n' "$want" | as_pg tee "$DIR/pg_hba.conf" >/dev/null
    return 0
  fi
  return 1
}

start() {
  ensure_installed
  local BIN; BIN=$(find_bin)
  if [ "$(id -u)" = "0" ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --home /var/lib/postgresql --shell /bin/bash postgres
  fi
  if ! as_pg "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
    if [ ! -f "$DIR/PG_VERSION" ]; then
      rm -rf "$DIR"; mkdir -p "$DIR"
      [ "$(id -u)" = "0" ] && chown postgres "$DIR"
      as_pg "$BIN/initdb" -D "$DIR" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null
      cat >>"$DIR/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR'
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 256MB
CONF
    fi
    write_hba || true
    as_pg "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w -t 30 start >/dev/null
    log "started PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') on port $PORT"
  elif write_hba; then
    as_pg "$BIN/pg_ctl" -D "$DIR" reload >/dev/null
  fi
  echo "postgres://postgres@127.0.0.1:$PORT/postgres"
}

# The owner of the second run's databases: what a hosted PostgreSQL gives (CREATEROLE, CREATEDB,
# no SUPERUSER). PostgreSQL 15 lets only a superuser create BYPASSRLS roles, so service and
# plinth_sql are made here beforehand, exactly as README "Running on PostgreSQL" tells an operator.
owner() {
  start >/dev/null
  local BIN; BIN=$(find_bin)
  as_pg "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR" -p "$PORT" -U postgres -d postgres >/dev/null <<'SQL' 2>/dev/null ||
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'plinth_owner') then
    create role plinth_owner login createrole createdb nosuperuser;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'service') then
    create role service nologin noinherit bypassrls;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'plinth_sql') then
    create role plinth_sql nologin noinherit bypassrls;
  end if;
end
$$;
grant service, plinth_sql to plinth_owner with admin option;
SQL
    { log "could not create the role plinth_owner"; exit 1; }
  echo plinth_owner
}

stop() {
  local BIN; BIN=$(find_bin) || exit 0
  as_pg "$BIN/pg_ctl" -D "$DIR" -m fast -w stop >/dev/null 2>&1 || true
}

case "${1:-start}" in
  start) start ;;
  owner) owner ;;
  stop) stop ;;
  *) echo "usage: $0 start|owner|stop" >&2; exit 2 ;;
esac
