#!/usr/bin/env bash
# The C API's tests (crates/herald-capi/tests/c), built with -Wall -Wextra -Werror and run
# three ways: as they are, under valgrind (any error, or memory definitely lost, fails),
# and built with AddressSanitizer and UndefinedBehaviorSanitizer. test_live and test_gap run
# against real servers this script starts on free loopback ports and stops by PID.
#   bash scripts/capi-tests.sh [debug|release]
# Installs gcc, valgrind and pkg-config with apt-get when missing. Leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-debug}"
root="$PWD"
lib="$root/target/$profile"
tests="$root/crates/herald-capi/tests/c"
include="$root/crates/herald-capi/include"

need=()
command -v gcc >/dev/null || need+=(gcc)
command -v valgrind >/dev/null || need+=(valgrind)
command -v pkg-config >/dev/null || need+=(pkg-config)
if ((${#need[@]})); then
  echo "capi-tests: installing ${need[*]}"
  apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
fi

cargo_profile=()
[[ "$profile" == release ]] && cargo_profile=(--release)
cargo build -q -p herald-capi -p herald-cli "${cargo_profile[@]}"

work=$(mktemp -d "${TMPDIR:-/tmp}/herald-capi-tests.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Starts a server with the given environment and sets `url` once it answers. (Not in a
# command substitution: that subshell's `pids` would never reach the cleanup.)
start_server() {
  local name=$1; shift
  local port http
  port=$(free_port); http=$(free_port)
  env "$@" "$lib/herald" serve --listen "127.0.0.1:$port" --http "127.0.0.1:$http" \
    --data-dir "$work/$name" >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      url="herald://127.0.0.1:$port"
      return
    fi
    sleep 0.1
  done
  echo "capi-tests: server $name did not start; its log:" >&2
  cat "$work/$name.log" >&2
  exit 1
}

python3 "$tests/gen_vectors.py" "$root/testdata/vectors" "$work/vectors.inc"
flags=(-std=c99 -g -Wall -Wextra -Werror -pedantic -I"$include" -I"$work")
sanitize=(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
programs=(test_args test_format test_vectors test_live test_gap)
for program in "${programs[@]}"; do
  extra=()
  # test_format compares odd formats ("%5%", "%y") with snprintf on purpose.
  [[ "$program" == test_format ]] && extra=(-Wno-format)
  gcc "${flags[@]}" "${extra[@]}" "$tests/$program.c" -L"$lib" -lherald -lpthread \
    -o "$work/$program"
  gcc "${flags[@]}" "${extra[@]}" "${sanitize[@]}" "$tests/$program.c" -L"$lib" -lherald \
    -lpthread -o "$work/$program-asan"
done
echo "capi-tests: built ${programs[*]}, plain and with ASan/UBSan (-Wall -Wextra -Werror)"

# Queues of 16 records: a slow subscriber loses records, and hears of it.
start_server gap HERALD_QUEUE_RECORDS=16
gap_url=$url
start_server live
# The programs ask for the library by its SONAME, libherald.so.0, as an installed one is.
mkdir -p "$work/lib"
ln -sf "$lib/libherald.so" "$work/lib/$(readelf -d "$lib/libherald.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')"
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
args() { case $1 in test_live) echo "$url" ;; test_gap) echo "$gap_url" ;; esac; }

for program in "${programs[@]}"; do
  # shellcheck disable=SC2046
  timeout 300 "$work/$program" $(args "$program")
done

for program in "${programs[@]}"; do
  # shellcheck disable=SC2046
  ASAN_OPTIONS=detect_leaks=1 timeout 300 "$work/$program-asan" $(args "$program")
done
echo "capi-tests: clean under AddressSanitizer and UndefinedBehaviorSanitizer"

# The slow subscriber of test_gap would only be slower under valgrind.
for program in test_args test_format test_vectors test_live; do
  # shellcheck disable=SC2046
  timeout 600 valgrind -q --leak-check=full --show-leak-kinds=definite \
    --errors-for-leak-kinds=definite --error-exitcode=1 "$work/$program" $(args "$program")
done
echo "capi-tests: clean under valgrind (no error, no memory definitely lost)"
