#!/usr/bin/env bash
# Installs and runs a real single-node Apache Cassandra 5.0 on 127.0.0.1 for Herald's CQL tests.
#
# Usage: scripts/cassandra.sh <command>
#   install  fetch Cassandra's jars from Maven Central into the cache (idempotent);
#            apt-get installs maven / openjdk-17 only if they are missing
#   start    install if needed, render the config into the run dir, start the node in the
#            background and wait until it answers CQL; a no-op if this run dir's node is
#            already running and ready. Existing data is kept (a node stopped by `kill` replays
#            its commit log); only `reset` deletes data.
#   wait     wait until the node answers CQL (CASSANDRA_START_TIMEOUT)
#   status   print whether the node runs and is ready; exit 0 only if ready
#            (1: running but not ready, 3: not running)
#   stop     SIGTERM (Cassandra drains on it), wait up to 20 s, then SIGKILL; no-op if not running
#   kill     SIGKILL at once (for tests that lose the node mid-stream and restart it)
#   reset    stop, then delete the run dir's data, logs and rendered config
#
# Environment (defaults in brackets):
#   HERALD_CASSANDRA_VERSION       Cassandra version from Maven Central [5.0.9]
#   HERALD_CASSANDRA_HOME          jar cache [$HOME/.cache/herald/cassandra-<version>]
#   HERALD_CASSANDRA_DIR           run dir: conf/, data/, logs/, cassandra.pid [<repo>/target/cassandra]
#   HERALD_CASSANDRA_PORT          CQL native transport port [9042]
#   HERALD_CASSANDRA_STORAGE_PORT  inter-node storage port, bound on 127.0.0.1 [17000]
#   HERALD_CASSANDRA_JAVA_HOME     a Java 17 home [/usr/lib/jvm/java-17-openjdk-<arch>]
#   HERALD_CASSANDRA_LOG_LEVEL     level written to <run dir>/logs/system.log [WARN]
#   HERALD_CASSANDRA_MLOCK         1: let Cassandra mlockall its memory when run as root [0]
#   HERALD_CASSANDRA_MVN_ARGS      extra arguments for mvn, e.g. -s settings.xml []
#   HERALD_CASSANDRA_COMMITLOG_SYNC  batch: a write is acknowledged after the commit log sync
#                                  that holds it, so a SIGKILLed node loses nothing acknowledged;
#                                  group: the same, but a sync waits for the writes of up to 10 ms
#                                  (slower for single writes on these machines); periodic:
#                                  Cassandra's default, markers every 100 ms and fsync every 10 s:
#                                  a SIGKILL loses the last <=100 ms of acknowledged writes [batch]
#   CASSANDRA_HEAP                 -Xms and -Xmx [512M]
#   CASSANDRA_START_TIMEOUT        seconds `start` / `wait` wait for readiness [180]
#
# Ready means: the native transport port answers a CQL OPTIONS frame with SUPPORTED
# (an open port alone is not enough). Works from any cwd, with no stdin and with CI=true.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$SCRIPT_DIR/.." && pwd)"
TEMPLATE_DIR="$SCRIPT_DIR/cassandra"

VERSION="${HERALD_CASSANDRA_VERSION:-5.0.9}"
CACHE_DIR="${HERALD_CASSANDRA_HOME:-${HOME:?HOME is not set}/.cache/herald/cassandra-$VERSION}"
RUN_DIR="${HERALD_CASSANDRA_DIR:-$REPO_DIR/target/cassandra}"
HOST=127.0.0.1
NATIVE_PORT="${HERALD_CASSANDRA_PORT:-9042}"
STORAGE_PORT="${HERALD_CASSANDRA_STORAGE_PORT:-17000}"
HEAP="${CASSANDRA_HEAP:-512M}"
START_TIMEOUT="${CASSANDRA_START_TIMEOUT:-180}"
LOG_LEVEL="${HERALD_CASSANDRA_LOG_LEVEL:-WARN}"
COMMITLOG_SYNC="${HERALD_CASSANDRA_COMMITLOG_SYNC:-batch}"
STOP_TIMEOUT=20
# Maven plugin pinned so the resolution does not depend on Central's "latest" metadata.
DEPENDENCY_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

# Absolute paths: the JVM runs in the run dir, and the PID check compares command lines.
[[ "$CACHE_DIR" == /* ]] || CACHE_DIR="$PWD/$CACHE_DIR"
[[ "$RUN_DIR" == /* ]] || RUN_DIR="$PWD/$RUN_DIR"
LIB_DIR="$CACHE_DIR/lib"
INSTALLED_STAMP="$CACHE_DIR/.installed"
CONF_DIR="$RUN_DIR/conf"
DATA_DIR="$RUN_DIR/data"
LOG_DIR="$RUN_DIR/logs"
PID_FILE="$RUN_DIR/cassandra.pid"
# Marker on the JVM's command line: tells this run dir's node from any other process.
DIR_MARKER="-Dherald.cassandra.dir=$RUN_DIR"

log() { printf 'cassandra.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
}

case "$NATIVE_PORT$STORAGE_PORT$START_TIMEOUT" in
    *[!0-9]*) die "HERALD_CASSANDRA_PORT, HERALD_CASSANDRA_STORAGE_PORT and CASSANDRA_START_TIMEOUT must be numbers" ;;
esac
[[ "$NATIVE_PORT" != "$STORAGE_PORT" ]] || die "native and storage port are both $NATIVE_PORT"
case "$COMMITLOG_SYNC" in
    periodic) COMMITLOG_SYNC_YAML=$'commitlog_sync: periodic\ncommitlog_sync_period: 10000ms' ;;
    group) COMMITLOG_SYNC_YAML=$'commitlog_sync: group\ncommitlog_sync_group_window: 10ms' ;;
    batch) COMMITLOG_SYNC_YAML='commitlog_sync: batch' ;;
    *) die "HERALD_CASSANDRA_COMMITLOG_SYNC must be periodic, group or batch, not '$COMMITLOG_SYNC'" ;;
esac

# ---------------------------------------------------------------------------------------------
# Locking: start/stop/reset of one run dir, and the install into one cache, run one at a time.

# lock_run_dir / lock_cache: exclusive locks held as fd 9 / fd 8 until the script exits.
lock_run_dir() {
    command -v flock >/dev/null 2>&1 || return 0
    mkdir -p "$RUN_DIR"
    exec 9>"$RUN_DIR/.lock"
    take_lock 9 "$RUN_DIR/.lock"
}
lock_cache() {
    command -v flock >/dev/null 2>&1 || return 0
    mkdir -p "$CACHE_DIR"
    exec 8>"$CACHE_DIR/.lock"
    take_lock 8 "$CACHE_DIR/.lock"
}
take_lock() {
    if ! flock -n "$1"; then
        log "waiting for another cassandra.sh holding $2"
        flock -w $((START_TIMEOUT + 600)) "$1" || die "timed out waiting for the lock $2"
    fi
}

# ---------------------------------------------------------------------------------------------
# Install

apt_install() {
    command -v apt-get >/dev/null 2>&1 || die "missing $*, and no apt-get to install it"
    local sudo=()
    if [[ "$(id -u)" != 0 ]]; then
        if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
            die "missing $*; install it (needs root): apt-get install $*"
        fi
        sudo=(sudo -n)
    fi
    log "installing $* with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq </dev/null
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" </dev/null
}

# Prints a Java 17 home; empty if there is none.
find_java17() {
    local d
    if [[ -n "${HERALD_CASSANDRA_JAVA_HOME:-}" ]]; then
        [[ -x "$HERALD_CASSANDRA_JAVA_HOME/bin/java" ]] \
            || die "HERALD_CASSANDRA_JAVA_HOME=$HERALD_CASSANDRA_JAVA_HOME has no bin/java"
        printf '%s\n' "$HERALD_CASSANDRA_JAVA_HOME"
        return
    fi
    # Not whatever `java` is on PATH: Cassandra 5.0 runs on Java 11 or 17 only.
    for d in /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/java-1.17.0-openjdk-* /usr/lib/jvm/temurin-17-*; do
        if [[ -x "$d/bin/java" ]]; then
            printf '%s\n' "$d"
            return
        fi
    done
}

JAVA_HOME_17=""
ensure_java17() {
    [[ -n "$JAVA_HOME_17" ]] && return
    JAVA_HOME_17="$(find_java17)"
    if [[ -z "$JAVA_HOME_17" ]]; then
        apt_install openjdk-17-jre-headless
        JAVA_HOME_17="$(find_java17)"
        [[ -n "$JAVA_HOME_17" ]] || die "openjdk-17 installed, but no /usr/lib/jvm/java-17-openjdk-*/bin/java"
    fi
}

is_installed() {
    [[ -f "$INSTALLED_STAMP" && "$(cat "$INSTALLED_STAMP")" == "$VERSION" ]] \
        && compgen -G "$LIB_DIR/cassandra-all-$VERSION.jar" >/dev/null \
        && compgen -G "$LIB_DIR/jamm-*.jar" >/dev/null
}

# cmd_install [quiet]: "quiet" says nothing when already installed (as part of `start`).
cmd_install() {
    if is_installed; then
        [[ "${1:-}" == quiet ]] || log "Cassandra $VERSION already installed in $CACHE_DIR"
        return
    fi
    lock_cache
    if is_installed; then # another cassandra.sh installed it while we waited
        log "Cassandra $VERSION already installed in $CACHE_DIR"
        return
    fi
    ensure_java17
    command -v mvn >/dev/null 2>&1 || apt_install maven
    local started=$SECONDS
    log "installing Cassandra $VERSION from Maven Central into $CACHE_DIR"
    mkdir -p "$CACHE_DIR"
    cat >"$CACHE_DIR/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by herald's scripts/cassandra.sh: resolves Apache Cassandra's runtime jars. -->
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>herald.local</groupId>
  <artifactId>herald-test-cassandra</artifactId>
  <version>$VERSION</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>$VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
    rm -rf "$LIB_DIR.tmp"
    local mvn_args=()
    # shellcheck disable=SC2206 # word splitting of the extra arguments is intended
    [[ -n "${HERALD_CASSANDRA_MVN_ARGS:-}" ]] && mvn_args=($HERALD_CASSANDRA_MVN_ARGS)
    if ! JAVA_HOME="$JAVA_HOME_17" mvn -B --no-transfer-progress -Dstyle.color=never "${mvn_args[@]}" \
        -f "$CACHE_DIR/pom.xml" \
        "$DEPENDENCY_PLUGIN:copy-dependencies" \
        -DincludeScope=runtime \
        -DoutputDirectory="$LIB_DIR.tmp" </dev/null >"$CACHE_DIR/mvn.log" 2>&1; then
        log "---- last 40 lines of $CACHE_DIR/mvn.log ----"
        tail -n 40 "$CACHE_DIR/mvn.log" >&2
        die "mvn could not fetch org.apache.cassandra:cassandra-all:$VERSION (log: $CACHE_DIR/mvn.log)"
    fi
    compgen -G "$LIB_DIR.tmp/jamm-*.jar" >/dev/null || die "mvn fetched no jamm jar"
    rm -rf "$LIB_DIR"
    mv "$LIB_DIR.tmp" "$LIB_DIR"
    printf '%s\n' "$VERSION" >"$INSTALLED_STAMP"
    log "installed $(find "$LIB_DIR" -name '*.jar' | wc -l) jars ($(du -sh "$LIB_DIR" | cut -f1)) in $((SECONDS - started)) s"
}

# ---------------------------------------------------------------------------------------------
# Process and readiness

# Prints the PID of this run dir's node if it is running; fails otherwise.
running_pid() {
    local pid
    [[ -f "$PID_FILE" ]] || return 1
    pid="$(tr -dc '0-9' <"$PID_FILE")"
    [[ -n "$pid" ]] && alive "$pid" || return 1
    # Guard against a recycled PID: the process must be this run dir's CassandraDaemon.
    if [[ -r "/proc/$pid/cmdline" ]]; then
        local cmdline
        cmdline="$(tr '\0' '\n' <"/proc/$pid/cmdline")"
        grep -qxF -- "$DIR_MARKER" <<<"$cmdline" || return 1
        grep -qxF org.apache.cassandra.service.CassandraDaemon <<<"$cmdline" || return 1
    fi
    printf '%s\n' "$pid"
}

# Succeeds if HOST:NATIVE_PORT answers a CQL (protocol v4) OPTIONS frame with SUPPORTED.
cql_ready() {
    if command -v python3 >/dev/null 2>&1; then
        python3 - "$HOST" "$NATIVE_PORT" <<'EOF' 2>/dev/null
import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
    s.settimeout(3)
    # header: version 4 request, flags 0, stream 0, opcode OPTIONS (5), body length 0
    s.sendall(bytes([0x04, 0, 0, 0, 0x05, 0, 0, 0, 0]))
    head = b""
    while len(head) < 9:
        chunk = s.recv(9 - len(head))
        if not chunk:
            sys.exit(1)
        head += chunk
    # response bit set, opcode SUPPORTED (6)
    sys.exit(0 if head[0] & 0x80 and head[4] == 0x06 else 1)
except Exception:
    sys.exit(1)
EOF
    else
        # shellcheck disable=SC2016 # expanded by the inner bash
        timeout 5 bash -c '
            exec 3<>"/dev/tcp/$0/$1" || exit 1
            printf "\x04\x00\x00\x00\x05\x00\x00\x00\x00" >&3
            head=$(head -c 9 <&3 | od -An -v -tx1 | tr -d " \n")
            [[ ${#head} == 18 && ${head:0:1} == 8 && ${head:8:2} == 06 ]]
        ' "$HOST" "$NATIVE_PORT" 2>/dev/null
    fi
}

# Succeeds if anything accepts TCP connections on HOST:PORT.
port_open() {
    # shellcheck disable=SC2016 # expanded by the inner bash
    timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$HOST" "$1" 2>/dev/null
}

print_log_tail() {
    local f
    for f in "$LOG_DIR/stdout.log" "$LOG_DIR/system.log"; do
        [[ -s "$f" ]] || continue
        log "---- last 40 lines of $f ----"
        tail -n 40 "$f" >&2
    done
    log "---- end of logs ----"
}

# wait_ready: waits up to START_TIMEOUT s for readiness; fails early if our node dies.
wait_ready() {
    local started=$SECONDS last_note=$SECONDS pid had_pid=""
    running_pid >/dev/null && had_pid=1
    log "waiting up to ${START_TIMEOUT} s for CQL on $HOST:$NATIVE_PORT"
    while true; do
        if cql_ready; then
            log "ready on $HOST:$NATIVE_PORT after $((SECONDS - started)) s"
            return 0
        fi
        if [[ -n "$had_pid" ]] && ! pid="$(running_pid)"; then
            log "Cassandra exited before it became ready"
            print_log_tail
            return 1
        fi
        if ((SECONDS - started >= START_TIMEOUT)); then
            log "not ready after ${START_TIMEOUT} s"
            print_log_tail
            if pid="$(running_pid)"; then
                log "the node is still running as pid $pid; \`$0 stop\` stops it"
            fi
            return 1
        fi
        if ((SECONDS - last_note >= 10)); then
            log "still waiting ($((SECONDS - started)) s)"
            last_note=$SECONDS
        fi
        sleep 0.5
    done
}

# ---------------------------------------------------------------------------------------------
# Commands

# render TEMPLATE OUT: replaces the @NAME@ placeholders of TEMPLATE.
render() {
    local text
    text="$(<"$1")"
    text="${text//@LISTEN_ADDRESS@/"$HOST"}"
    text="${text//@NATIVE_PORT@/"$NATIVE_PORT"}"
    text="${text//@STORAGE_PORT@/"$STORAGE_PORT"}"
    text="${text//@DATA_DIR@/"$DATA_DIR"}"
    text="${text//@LOG_DIR@/"$LOG_DIR"}"
    text="${text//@LOG_LEVEL@/"$LOG_LEVEL"}"
    text="${text//@COMMITLOG_SYNC@/"$COMMITLOG_SYNC_YAML"}"
    printf '%s\n' "$text" >"$2.tmp"
    mv "$2.tmp" "$2"
}

cmd_start() {
    local pid
    lock_run_dir
    if pid="$(running_pid)"; then
        if cql_ready; then
            log "already running (pid $pid) and ready on $HOST:$NATIVE_PORT; nothing to do"
            return 0
        fi
        log "already running (pid $pid) but not ready yet"
        wait_ready
        return
    fi
    rm -f "$PID_FILE"
    if port_open "$NATIVE_PORT"; then
        die "$HOST:$NATIVE_PORT is taken by a process not started from $RUN_DIR" \
            "(another Cassandra? set HERALD_CASSANDRA_PORT / HERALD_CASSANDRA_DIR)"
    fi
    if port_open "$STORAGE_PORT"; then
        die "storage port $HOST:$STORAGE_PORT is taken (set HERALD_CASSANDRA_STORAGE_PORT)"
    fi

    cmd_install quiet
    ensure_java17

    rm -rf "$RUN_DIR/tmp" && mkdir -p "$RUN_DIR/tmp" "$CONF_DIR/triggers" "$DATA_DIR"/{data,commitlog,saved_caches,hints,cdc_raw} "$LOG_DIR"
    render "$TEMPLATE_DIR/cassandra.yaml.in" "$CONF_DIR/cassandra.yaml"
    render "$TEMPLATE_DIR/logback.xml.in" "$CONF_DIR/logback.xml"

    local jamm opts=() line
    jamm="$(compgen -G "$LIB_DIR/jamm-*.jar" | head -n 1)"
    while IFS= read -r line || [[ -n "$line" ]]; do
        line="${line#"${line%%[![:space:]]*}"}"
        line="${line%"${line##*[![:space:]]}"}"
        [[ -z "$line" || "$line" == '#'* ]] && continue
        opts+=("$line")
    done <"$TEMPLATE_DIR/jvm17.options"

    local cmd=(
        "$JAVA_HOME_17/bin/java"
        "-Xms$HEAP" "-Xmx$HEAP"
        "${opts[@]}"
        "-XX:HeapDumpPath=$LOG_DIR"
        "-XX:ErrorFile=$LOG_DIR/hs_err_%p.log"
        "-javaagent:$jamm"
        "-Dcassandra.config=file://$CONF_DIR/cassandra.yaml"
        "-Dlogback.configurationFile=file://$CONF_DIR/logback.xml"
        "-Dcassandra.storagedir=$DATA_DIR"
        "-Dcassandra.logdir=$LOG_DIR"
        "-Dcassandra.triggers_dir=$CONF_DIR/triggers"
        # Native libraries the JVM unpacks (lz4-java leaves a .so and a .lck per start) go to
        # the run dir, not /tmp.
        "-Djava.io.tmpdir=$RUN_DIR/tmp"
        "-Dcassandra-foreground=yes"
        # One node, nobody to gossip with: do not wait for gossip to settle before serving CQL.
        "-Dcassandra.skip_wait_for_gossip_to_settle=0"
        # ... and on SIGTERM do not wait 2 s to announce the shutdown to (no) peers.
        "-Dcassandra.shutdown_announce_in_ms=0"
        "$DIR_MARKER"
        -cp "$CONF_DIR:$LIB_DIR/*"
        org.apache.cassandra.service.CassandraDaemon
    )
    # As root, Cassandra's mlockall(MCL_CURRENT) succeeds and pins the whole committed heap
    # (-Xms = -Xmx) in RAM. Without CAP_IPC_LOCK it fails against RLIMIT_MEMLOCK (a startup
    # warning), as it does for ordinary users: RSS then reflects use. HERALD_CASSANDRA_MLOCK=1
    # keeps the lock.
    if [[ "$(id -u)" == 0 && "${HERALD_CASSANDRA_MLOCK:-0}" != 1 ]] && command -v setpriv >/dev/null 2>&1 \
        && setpriv --bounding-set -ipc_lock --inh-caps -ipc_lock true 2>/dev/null; then
        cmd=(setpriv --bounding-set -ipc_lock --inh-caps -ipc_lock "${cmd[@]}")
    fi
    log "starting Cassandra $VERSION (heap $HEAP) in $RUN_DIR on $HOST:$NATIVE_PORT (storage $STORAGE_PORT)"
    printf '==== %s starting: %s\n' "$(date -Is)" "${cmd[*]}" >>"$LOG_DIR/stdout.log"
    # Own session, no stdin, output to the log, and without the locks' fds 8 and 9 (the JVM
    # would otherwise hold the locks for as long as it runs). Job control is off in scripts, so
    # setsid does not fork and $! is the JVM's own PID.
    (cd "$RUN_DIR" && exec setsid "${cmd[@]}" </dev/null >>"$LOG_DIR/stdout.log" 2>&1 8>&- 9>&-) &
    pid=$!
    printf '%s\n' "$pid" >"$PID_FILE"
    sleep 0.2
    running_pid >/dev/null || {
        sleep 1
        running_pid >/dev/null || {
            log "Cassandra exited at once"
            print_log_tail
            exit 1
        }
    }
    log "started, pid $pid (logs in $LOG_DIR)"
    wait_ready
}

cmd_wait() {
    wait_ready
}

cmd_status() {
    local pid
    if pid="$(running_pid)"; then
        if cql_ready; then
            echo "running (pid $pid), ready on $HOST:$NATIVE_PORT"
            return 0
        fi
        echo "running (pid $pid), not ready on $HOST:$NATIVE_PORT"
        return 1
    fi
    if cql_ready; then
        echo "not running from $RUN_DIR, but $HOST:$NATIVE_PORT answers CQL (another node)"
    else
        echo "not running"
    fi
    return 3
}

# Succeeds while PID $1 exists and is not a finished zombie (a container without an init
# process may leave the dead JVM unreaped). A zombie main thread whose other threads still
# run is not finished: the process still holds its sockets and files.
alive() {
    kill -0 "$1" 2>/dev/null || return 1
    [[ -d /proc/self ]] || return 0 # no procfs: trust kill -0
    local key value state="" threads=""
    while read -r key value _; do
        case "$key" in
            State:) state="$value" ;;
            Threads:) threads="$value" ;;
        esac
    done <"/proc/$1/status" 2>/dev/null || return 1
    ! [[ "$state" == Z && "${threads:-1}" -le 1 ]]
}

# Waits up to $1 seconds for PID $2 to exit.
wait_exit() {
    local deadline=$((SECONDS + $1))
    while alive "$2"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.2
    done
}

do_stop() {
    local pid
    if ! pid="$(running_pid)"; then
        log "not running"
        rm -f "$PID_FILE"
        return 0
    fi
    log "stopping pid $pid (SIGTERM, up to ${STOP_TIMEOUT} s)"
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_exit "$STOP_TIMEOUT" "$pid"; then
        log "still running after ${STOP_TIMEOUT} s; SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        wait_exit 10 "$pid" || die "pid $pid survived SIGKILL"
    fi
    rm -f "$PID_FILE"
    log "stopped"
}

cmd_stop() {
    lock_run_dir
    do_stop
}

cmd_kill() {
    # No lock: this must act at once, even while a `start` is waiting.
    local pid
    if ! pid="$(running_pid)"; then
        log "not running"
        rm -f "$PID_FILE"
        return 0
    fi
    kill -KILL "$pid" 2>/dev/null || true
    wait_exit 10 "$pid" || die "pid $pid survived SIGKILL"
    rm -f "$PID_FILE"
    log "killed pid $pid"
}

cmd_reset() {
    lock_run_dir
    do_stop
    # Only what this script creates; never the run dir itself (it may be a user's directory).
    rm -rf "$DATA_DIR" "$LOG_DIR" "$CONF_DIR" "$PID_FILE"
    log "deleted the data, logs and config in $RUN_DIR"
}

case "${1:-}" in
    install) cmd_install ;;
    start) cmd_start ;;
    wait) cmd_wait ;;
    status) cmd_status ;;
    stop) cmd_stop ;;
    kill) cmd_kill ;;
    reset) cmd_reset ;;
    -h | --help | help)
        usage
        ;;
    *)
        usage
        exit 2
        ;;
esac
