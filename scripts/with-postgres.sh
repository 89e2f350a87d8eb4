#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster on 127.0.0.1 and FLIGHTSRV_TEST_PG_URL
# pointing at it; the cluster is stopped by its process id and deleted afterwards.
# Uses the machine's PostgreSQL server binaries; installs the Debian postgresql package first
# when they are missing (needs root and Debian's package mirror).
set -euo pipefail

find_bindir() {
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir; return
  fi
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && { echo "$d"; return; }
  done
  if command -v initdb >/dev/null 2>&1; then dirname "$(readlink -f "$(command -v initdb)")"; return; fi
  return 1
}

bindir=$(find_bindir || true)
if [ -z "$bindir" ]; then
  echo "with-postgres: no PostgreSQL server binaries found; installing the Debian postgresql package" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  bindir=$(find_bindir)
fi

base=$(mktemp -d /tmp/flightsrv-pg.XXXXXX)
chmod 755 "$base"
run_as=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  chown postgres "$base"
  run_as=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 54329)

"${run_as[@]}" "$bindir/initdb" -D "$base/data" --auth=trust -U postgres -E UTF8 >"$base/initdb.log" 2>&1 || { cat "$base/initdb.log" >&2; exit 1; }
"${run_as[@]}" "$bindir/postgres" -D "$base/data" -h 127.0.0.1 -p "$port" -k "$base" \
  -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 >"$base/postgres.log" 2>&1 &
pgpid=$!
cleanup() {
  # Stop the postmaster itself (runuser does not forward SIGINT): fast shutdown by its pid.
  local pid
  pid=$(head -1 "$base/data/postmaster.pid" 2>/dev/null || true)
  [ -n "$pid" ] && kill -INT "$pid" 2>/dev/null || true
  kill -INT "$pgpid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pgpid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pgpid" 2>/dev/null || true
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  wait "$pgpid" 2>/dev/null || true
  rm -rf "$base"
}
trap cleanup EXIT

for _ in $(seq 1 100); do
  if "$bindir/pg_isready" -h 127.0.0.1 -p "$port" -U postgres >/dev/null 2>&1; then break; fi
  sleep 0.1
done
"$bindir/pg_isready" -h 127.0.0.1 -p "$port" -U postgres >/dev/null || { cat "$base/postgres.log" >&2; exit 1; }

export FLIGHTSRV_TEST_PG_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
echo "with-postgres: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (pid $pgpid)" >&2
set +e
"$@"
rc=$?
exit $rc
