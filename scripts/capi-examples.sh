#!/usr/bin/env bash
# Checks the C API the way its users meet it: installs it into a temporary prefix
# (scripts/install-capi.sh), builds examples/c with cc and pkg-config and examples/cpp with
# CMake's find_package(Herald), warnings as errors, starts a server of its own, and runs
# logger → subscriber and the info watcher in C and in C++. Any failure fails the script.
#
# Usage: scripts/capi-examples.sh [debug|release] [--valgrind]
#   debug|release  the build in target/<profile>/ to check (default: debug); libherald and
#                  the herald binary are built with cargo only when missing
#   --valgrind     also run every example under valgrind (leaks, invalid reads and writes)
#
# Installs what is missing with apt-get: a C and C++ compiler, cmake, pkg-config (and
# valgrind with --valgrind). The server listens on ports the system picks (127.0.0.1:0), so
# several runs may go on at once; it is stopped, and the temporary directory removed, on
# every exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

profile="debug"
valgrind=0
for argument in "$@"; do
  case "$argument" in
    debug | release) profile="$argument" ;;
    --valgrind) valgrind=1 ;;
    *)
      echo "usage: scripts/capi-examples.sh [debug|release] [--valgrind]" >&2
      exit 2
      ;;
  esac
done

step() { printf '\n==> capi-examples: %s\n' "$*"; }
die() {
  echo "capi-examples: $*" >&2
  exit 1
}

# --- What it needs ---------------------------------------------------------------------

apt_updated=""
apt_install() {
  local as_root=""
  [[ "$(id -u)" == 0 ]] || as_root="sudo"
  if [[ -z "$apt_updated" ]]; then
    DEBIAN_FRONTEND=noninteractive $as_root apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq "$@" >/dev/null
}
missing=()
command -v "${CC:-cc}" >/dev/null || missing+=(gcc)
command -v "${CXX:-c++}" >/dev/null || missing+=(g++)
command -v cmake >/dev/null || missing+=(cmake)
command -v pkg-config >/dev/null || missing+=(pkg-config)
[[ "$valgrind" == 0 ]] || command -v valgrind >/dev/null || missing+=(valgrind)
if [[ ${#missing[@]} -gt 0 ]]; then
  step "installing ${missing[*]}"
  apt_install "${missing[@]}"
fi

# --- A temporary directory, and the cleanup of everything started ----------------------

work="$(mktemp -d "${TMPDIR:-/tmp}/herald-capi-examples.XXXXXX")"
server_pid=""
subscriber_pid=""

# Stops a process this script started: TERM, then KILL if it has not ended in 10 s.
stop_process() {
  local pid="$1"
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$?
  trap - EXIT
  [[ -z "$subscriber_pid" ]] || stop_process "$subscriber_pid"
  [[ -z "$server_pid" ]] || stop_process "$server_pid"
  if [[ $status -ne 0 && -f "$work/server.log" ]]; then
    echo "capi-examples: the server's log:" >&2
    tail -n 40 "$work/server.log" >&2
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# How examples run: as they are, or under valgrind, always with a time limit so that a hang
# fails instead of stalling CI.
run_timeout_s=60
runner=(timeout "$run_timeout_s")
if [[ "$valgrind" == 1 ]]; then
  run_timeout_s=240
  runner=(timeout "$run_timeout_s" valgrind -q --leak-check=full --show-leak-kinds=definite
    --errors-for-leak-kinds=definite --error-exitcode=1)
fi

# --- Install and build ------------------------------------------------------------------

step "install the C API ($profile) into a temporary prefix"
bash scripts/install-capi.sh "$work/prefix" --profile "$profile"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"

step "build examples/c with ${CC:-cc} -std=c99 and pkg-config (herald.pc's rpath finds the library)"
mkdir -p "$work/c"
read -r -a herald_flags <<<"$(pkg-config --cflags --libs herald)"
for example in logger subscriber info_watcher; do
  "${CC:-cc}" -std=c99 -Wall -Wextra -Werror -pedantic "examples/c/$example.c" \
    "${herald_flags[@]}" -o "$work/c/$example"
  echo "built $work/c/$example"
done

step "build examples/cpp with CMake (find_package(Herald), Herald::herald) as C++17"
cmake -S examples/cpp -B "$work/cpp" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DHERALD_EXAMPLES_WERROR=ON --log-level=WARNING >/dev/null
cmake --build "$work/cpp"

# --- A server of our own -----------------------------------------------------------------

target_dir="${CARGO_TARGET_DIR:-$root/target}/$profile"
herald="$target_dir/herald"
if [[ ! -x "$herald" ]]; then
  cargo_profile="$profile"
  [[ "$profile" == debug ]] && cargo_profile="dev"
  step "build the herald binary (cargo build -p herald-cli --profile $cargo_profile)"
  cargo build -p herald-cli --profile "$cargo_profile" --locked
fi

step "start a server on ports the system picks"
# A HERALD_CONFIG of the caller's must not change this server.
env -u HERALD_CONFIG "$herald" serve --listen 127.0.0.1:0 --http 127.0.0.1:0 \
  --data-dir "$work/data" >"$work/server.log" 2>&1 &
server_pid=$!
address=""
for _ in $(seq 300); do
  kill -0 "$server_pid" 2>/dev/null || die "the server (pid $server_pid) exited at start"
  address="$(sed -n 's/^herald serving on \([0-9.:]*\)$/\1/p' "$work/server.log")"
  [[ -z "$address" ]] || break
  sleep 0.1
done
[[ -n "$address" ]] || die "the server did not say where it listens within 30 s"
url="herald://$address"
echo "server pid $server_pid at $url"

# --- Run --------------------------------------------------------------------------------

# logger → subscriber in one language: the subscriber waits for the logger's 4 records at
# INFO and above (a DEBUG record the flight recorder might send is left out by the filter).
# A fourth argument makes the subscriber join that queue group (alone in it, it gets all).
check_logger_to_subscriber() {
  local language="$1" dir="$2" subject_prefix="$3" group=("${@:4}")
  local output="$work/$language-subscriber.out"
  step "$language: logger → subscriber on $subject_prefix.*${group[*]:+ in queue group ${group[*]}}"
  ${runner[@]+"${runner[@]}"} "$dir/subscriber" "$url" "$subject_prefix.*" 4 \
    "$((run_timeout_s - 10))" '>=INFO' ${group[@]+"${group[@]}"} >"$output" 2>&1 &
  subscriber_pid=$!
  # It prints "subscribed" once the server has the subscription; only then may the logger run.
  until grep -q '^subscribed' "$output"; do
    if ! kill -0 "$subscriber_pid" 2>/dev/null; then
      cat "$output" >&2
      die "$language subscriber exited before subscribing"
    fi
    sleep 0.1
  done
  if ! ${runner[@]+"${runner[@]}"} "$dir/logger" "$url" "$subject_prefix.LOGGER"; then
    cat "$output" >&2
    die "$language logger failed"
  fi
  local status=0
  wait "$subscriber_pid" || status=$?
  subscriber_pid=""
  cat "$output"
  [[ $status -eq 0 ]] || die "$language subscriber failed (exit $status)"
}

check_info_watcher() {
  local language="$1" dir="$2" object="$3"
  step "$language: info watcher on $object"
  ${runner[@]+"${runner[@]}"} "$dir/info_watcher" "$url" "$object" 3 "$((run_timeout_s - 10))" ||
    die "$language info watcher failed"
}

check_logger_to_subscriber C "$work/c" CI.C
check_logger_to_subscriber C++ "$work/cpp" CI.CPP cpp-readers
check_info_watcher C "$work/c" ci.valve_c
check_info_watcher C++ "$work/cpp" ci.valve_cpp

if [[ "$valgrind" == 1 ]]; then
  step "all C and C++ examples passed, under valgrind too"
else
  step "all C and C++ examples passed"
fi
