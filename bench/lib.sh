# Sourced by the bench scripts (bench/security.sh, bench/cluster-*.sh): builds herald in
# release (not with BENCH_NO_BUILD=1, which takes target/release/herald as it is) and sets H
# to it, makes a scratch directory W (the script's own cleanup removes it), and `labelled WAY
# SCENARIO` prefixes the JSON line a bench prints on stdin with the way and the scenario, as
# the scripts' outputs are read.
if [[ ${BENCH_NO_BUILD:-0} != 1 ]]; then cargo build --release -q -p herald-cli; fi
H=$PWD/target/release/herald
W=$(mktemp -d "/tmp/herald-bench-$(basename "$0" .sh).XXXXXX")
labelled() { python3 -c "import sys,json; print('$1 $2', json.dumps(json.load(sys.stdin)))"; }
