#!/usr/bin/env bash
# Runs a cluster of Herald servers on loopback, for trials and demos (docs/cluster.md).
#
# Usage: scripts/cluster.sh <command>
#   start N [--cassandra]
#             build herald if needed and start N members in a new temporary directory: member 1
#             first, the others joining through it (--route); waits until each says where it
#             listens, then prints one herald://… URL naming every member (clients fail over
#             along it) and each member's UI. Refuses if a cluster of this script still runs.
#             --cassandra: the archive on Apache Cassandra (scripts/cassandra.sh start, which
#             installs it if needed; keyspace herald_cluster), and every information object
#             in one namespace, `objects`, whose owner holds a lease there (docs/cluster.md);
#             Cassandra is left running (scripts/cassandra.sh stop).
#   status    print the members and whether each process runs
#   stop      stop the members by their PIDs (SIGTERM, then SIGKILL after 10 s) and remove the
#             directory
#
# Environment (not HERALD_*, which herald serve reads as its settings; those pass through to the
# members, e.g. HERALD_ARCHIVE_BACKEND=none): CLUSTER_SH_DIR, where the state goes
# [${TMPDIR:-/tmp}/herald-cluster];
# CLUSTER_SH_BIN, the herald binary [<repo>/target/release/herald, built if missing];
# CLUSTER_SH_CASSANDRA, the Cassandra node with --cassandra [127.0.0.1:9042].
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${CLUSTER_SH_DIR:-${TMPDIR:-/tmp}/herald-cluster}
BIN=${CLUSTER_SH_BIN:-$PWD/target/release/herald}

running() { [ -f "$DIR/pids" ] && while read -r pid; do kill -0 "$pid" 2>/dev/null && return 0; done < "$DIR/pids"; return 1; }

# Waits for `what` (a banner prefix) in member $1's log; prints the rest of that line.
banner() {
  local log=$DIR/member-$1/serve.log what=$2
  for _ in $(seq 1 200); do
    local line
    line=$(grep -m1 "^$what" "$log" 2>/dev/null || true)
    if [ -n "$line" ]; then echo "${line#"$what"}"; return 0; fi
    sleep 0.05
  done
  echo "member $1 did not start; its log:" >&2; cat "$log" >&2; return 1
}

start() {
  local n=${1:-} cassandra=${2:-}
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/cluster.sh start N [--cassandra] (N ≥ 1)" >&2; exit 2; }
  [ -z "$cassandra" ] || [ "$cassandra" = --cassandra ] || { echo "unknown option $cassandra (expected --cassandra)" >&2; exit 2; }
  if running; then echo "a cluster runs already (scripts/cluster.sh status; stop it first)" >&2; exit 1; fi
  [ -x "$BIN" ] || cargo build --release -q -p herald-cli
  rm -rf "$DIR" && mkdir -p "$DIR"
  : > "$DIR/pids"
  local seed="" urls=() uis=() config=()
  if [ -n "$cassandra" ]; then
    bash scripts/cassandra.sh start >&2
    printf '[archive]\nbackend = "cassandra"\ncontact_points = ["%s"]\nkeyspace = "herald_cluster"\n\n[cluster]\nname = "herald-cluster"\n\n[[cluster.namespaces]]\nname = "objects"\nnames = ["*"]\n' \
      "${CLUSTER_SH_CASSANDRA:-127.0.0.1:9042}" > "$DIR/cassandra.toml"
    config=(--config "$DIR/cassandra.toml")
  fi
  for i in $(seq 1 "$n"); do
    mkdir -p "$DIR/member-$i"
    local args=(serve --name "member-$i" --data-dir "$DIR/member-$i/data"
      --listen 127.0.0.1:0 --http 127.0.0.1:0
      --cluster herald-cluster --cluster-listen 127.0.0.1:0 --log-level warn "${config[@]}")
    [ -n "$seed" ] && args+=(--route "herald://$seed")
    "$BIN" "${args[@]}" > "$DIR/member-$i/serve.log" 2>&1 < /dev/null &
    echo $! >> "$DIR/pids"
    urls+=("$(banner "$i" "herald serving on ")")
    uis+=("http://$(banner "$i" "herald http on ")")
    local routes
    routes=$(banner "$i" "  cluster: ")
    [ -z "$seed" ] && seed=${routes##* routes on }
  done
  local joined
  joined=$(IFS=,; echo "${urls[*]}")
  echo "$n members of cluster herald-cluster in $DIR"
  echo "url:  herald://$joined"
  for i in $(seq 1 "$n"); do echo "ui:   member-$i ${uis[$((i - 1))]}"; done
  echo "stop: scripts/cluster.sh stop"
  echo "herald://$joined" > "$DIR/url"
}

status() {
  [ -f "$DIR/pids" ] || { echo "no cluster (nothing in $DIR)"; exit 3; }
  local i=0
  while read -r pid; do
    i=$((i + 1))
    if kill -0 "$pid" 2>/dev/null; then echo "member-$i pid $pid running"; else echo "member-$i pid $pid gone"; fi
  done < "$DIR/pids"
  [ -f "$DIR/url" ] && echo "url: $(cat "$DIR/url")"
}

stop() {
  [ -f "$DIR/pids" ] || { echo "no cluster to stop"; return 0; }
  while read -r pid; do kill "$pid" 2>/dev/null || true; done < "$DIR/pids"
  for _ in $(seq 1 100); do running || break; sleep 0.1; done
  while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done < "$DIR/pids"
  rm -rf "$DIR"
  echo "stopped"
}

case ${1:-} in
  start) start "${2:-}" "${3:-}" ;;
  status) status ;;
  stop) stop ;;
  *) echo "usage: scripts/cluster.sh start N [--cassandra] | status | stop" >&2; exit 2 ;;
esac
