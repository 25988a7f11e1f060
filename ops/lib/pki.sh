# Shell functions for the certificates ops scripts run jackpotd and its clients with (ops/pki).

# Makes, in directory $2, the site CA and jackpotd's certificate if they are not there, and a
# client certificate for each principal ROLE/ID in $3... that is not there yet; each supervisor
# and admin among them goes on the roster $2/roster (jackpotd --roster) if not on it yet. $1 is
# the checkout's root.
pki_ensure() {
  local root=$1 dir=$2
  shift 2
  "$root/ops/pki" ca "$dir" >/dev/null
  if [ ! -f "$dir/server.pem" ] || [ ! -f "$dir/server.key" ]; then
    "$root/ops/pki" server "$dir" --force >/dev/null
  fi
  local -A missing=()
  local principal role id
  for principal in "$@"; do
    role=${principal%%/*}
    id=${principal#*/}
    [ -f "$dir/$role-$id.pem" ] && [ -f "$dir/$role-$id.key" ] || missing[$role]+=" $id"
  done
  for role in "${!missing[@]}"; do
    # shellcheck disable=SC2086  # One argument per id.
    "$root/ops/pki" client "$dir" "$role" ${missing[$role]} --force >/dev/null
  done
  [ -f "$dir/roster" ] || echo "# The supervisors and admins who may act (jackpotd --roster)." \
    >"$dir/roster"
  for principal in "$@"; do
    case $principal in
      supervisor/* | admin/*) grep -qxF "$principal" "$dir/roster" || echo "$principal" >>"$dir/roster" ;;
    esac
  done
  chmod 600 "$dir/roster"  # jackpotd refuses a roster its group or everyone may write.
}

# jackpotd's mutual TLS flags for a directory pki_ensure made, one word each, with its roster;
# given the jackpotd binary as $2, the roster only when that build takes one.
pki_daemon_flags() {
  printf '%s\n' --tls-cert "$1/server.pem" --tls-key "$1/server.key" --tls-client-ca "$1/ca.pem"
  if [ -z "${2:-}" ] || grep -q -- --roster <<<"$("$2" --help)"; then
    printf '%s\n' --roster "$1/roster"
  fi
}

# The transport flags for the jackpotd binary $1 and the clients of it, with the certificates in
# directory $2: mutual TLS, or plaintext for a build older than mutual TLS (it has nothing else).
# One word per line, for mapfile.
# (Its help is read whole first: grep -q would stop reading early, and under pipefail the
# daemon's SIGPIPE would read as "no".)
pki_daemon_transport() {
  if grep -q -- --tls-cert <<<"$("$1" --help)"; then pki_daemon_flags "$2" "$1"; fi
}
pki_client_transport() {
  if grep -q -- --tls-cert <<<"$("$1" --help)"; then
    printf '%s\n' --pki "$2"
  else
    printf '%s\n' --plaintext on
  fi
}
