#!/usr/bin/env bash
# Runs the Java client's tests: unit tests (JUnit 5, the shared wire vectors included) and
# integration tests against a real `herald serve` that the tests start themselves on
# loopback ports, each with a temporary data directory they remove.
#
#   scripts/java-tests.sh HERALD_BINARY
#
# HERALD_BINARY is the `herald` executable to test against (e.g. target/release/herald).
# Needs Java 17+ and Maven 3.8+ on PATH; Maven's cache stays in ~/.m2 between runs.
# Works without a terminal or stdin (CI=true), and may be run again and again.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 HERALD_BINARY   (the herald executable the integration tests start)" >&2
    exit 2
fi
binary=$1
if [[ ! -x "$binary" || -d "$binary" ]]; then
    echo "java-tests: \`$binary\` is not an executable file (build it with: cargo build --release -p herald-cli)" >&2
    exit 2
fi
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")

for tool in java mvn; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "java-tests: \`$tool\` is not on PATH (install a Java 17 JDK and Maven 3.8+)" >&2
        exit 2
    fi
done
java_major=$(java -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}' | cut -d. -f1)
if [[ -z "$java_major" || "$java_major" -lt 17 ]]; then
    echo "java-tests: Java 17 or later is needed, found \`$(java -version 2>&1 | head -1)\`" >&2
    exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here/java"
exec mvn -B -ntp verify -Dherald.binary="$binary" </dev/null
