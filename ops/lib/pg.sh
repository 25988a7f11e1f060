# Shell functions to run a private PostgreSQL cluster on a Unix socket, used by ops/test (a
# throwaway cluster per run) and ops/demo (a lasting one under var/). Source this file.
#
# initdb and postgres refuse to run as root, so as root the server runs as the unprivileged
# user 'postgres' (created by Debian's postgresql package); as any other user it runs as that
# user. The cluster listens on a Unix socket only (no TCP port to collide with other builds), and
# trusts local connections as the superuser 'postgres'.

pg_bindir() {
  local dir
  for dir in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    if [ -x "$dir/initdb" ]; then echo "$dir"; return 0; fi
  done
  echo "ops: no PostgreSQL server binaries found (run ops/setup)" >&2
  return 1
}

# Runs a command as the cluster's owner.
pg_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# pg_cluster_init DIR: creates DIR/data (if absent) and DIR/run, owned by the cluster's owner.
pg_cluster_init() {
  local dir=$1 bin
  bin=$(pg_bindir) || return 1
  # pg_ctl hands the server's options to a shell: a path with these characters would not reach
  # the server as written.
  if [[ "$dir" == *[\'\"\$\`\\]* ]]; then
    echo "ops: the path $dir has a quote, \$, \` or \\ in it, which pg_ctl cannot pass on;" \
      "use a directory without them" >&2
    return 1
  fi
  mkdir -p "$dir/run"
  if [ "$(id -u)" -eq 0 ]; then
    # Every parent must be traversable by the server's user.
    local parent=$dir
    while [ "$parent" != / ]; do
      parent=$(dirname "$parent")
      if ! runuser -u postgres -- test -x "$parent"; then
        echo "ops: the postgres user cannot enter $parent; put the checkout where it can" >&2
        return 1
      fi
    done
    chown postgres: "$dir" "$dir/run"
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    pg_as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
  fi
}

# pg_cluster_start DIR [extra postgres -c settings...]: starts the server and waits until ready.
pg_cluster_start() {
  local dir=$1 bin
  shift
  bin=$(pg_bindir) || return 1
  local options="-c listen_addresses='' -c unix_socket_directories='$dir/run'"
  local setting
  for setting in "$@"; do options+=" -c $setting"; done
  if ! pg_as_owner "$bin/pg_ctl" start -w -t 60 -D "$dir/data" -l "$dir/server.log" \
      -o "$options" >/dev/null; then
    echo "ops: PostgreSQL did not start; its log:" >&2
    cat "$dir/server.log" >&2
    return 1
  fi
}

# pg_cluster_stop DIR: fast shutdown; quiet, and harmless if the server is not running.
pg_cluster_stop() {
  local dir=$1 bin
  bin=$(pg_bindir) || return 0
  if [ -f "$dir/data/postmaster.pid" ]; then
    pg_as_owner "$bin/pg_ctl" stop -w -t 60 -m fast -D "$dir/data" >/dev/null 2>&1 || true
  fi
}

# pg_cluster_dsn DIR [DBNAME]: the libpq connection string (without dbname when none is given).
# The socket directory is quoted as libpq reads values, so a checkout path with spaces works
# (pg_cluster_init refuses quotes and backslashes).
pg_cluster_dsn() {
  local dsn="host='$1/run' port=5432 user=postgres"
  if [ -n "${2:-}" ]; then dsn+=" dbname=$2"; fi
  echo "$dsn"
}
