#!/usr/bin/env bash
# Installs the C API of the Herald client for C and C++ programs:
#   PREFIX/lib/libherald.so.VERSION (SONAME libherald.so.MAJOR, and both links), libherald.a
#   PREFIX/include/herald.h, PREFIX/include/herald.hpp (and any header they include)
#   PREFIX/lib/pkgconfig/herald.pc                      pkg-config --cflags --libs herald
#   PREFIX/lib/cmake/Herald/HeraldConfig.cmake (+ Version)  find_package(Herald), Herald::herald
#
# Usage: scripts/install-capi.sh PREFIX [--profile release|debug] [--no-rpath]
#   --profile   which build to install, from target/<profile>/ (default: release); it is
#               built (or brought up to date) with `cargo build -p herald-capi` first.
#   --no-rpath  leave `-Wl,-rpath,PREFIX/lib` out of herald.pc. By default it is in, so that
#               programs linked with pkg-config find libherald.so in a prefix the loader does
#               not search (/opt/herald …) without LD_LIBRARY_PATH. CMake sets its own rpath.
#
# Static linking: link PREFIX/lib/libherald.a and `pkg-config --static --libs-only-l herald`'s
# other libraries (Libs.private), or the CMake target Herald::herald_static.
set -euo pipefail

usage() {
  echo "usage: scripts/install-capi.sh PREFIX [--profile release|debug] [--no-rpath]" >&2
  exit 2
}

prefix=""
profile="release"
rpath=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --profile)
      [[ $# -ge 2 ]] || usage
      profile="$2"
      shift 2
      ;;
    --profile=*)
      profile="${1#--profile=}"
      shift
      ;;
    --no-rpath)
      rpath=0
      shift
      ;;
    -h | --help) usage ;;
    -*)
      echo "install-capi: unknown option \`$1\`" >&2
      usage
      ;;
    *)
      [[ -z "$prefix" ]] || usage
      prefix="$1"
      shift
      ;;
  esac
done
[[ -n "$prefix" ]] || usage
case "$profile" in
  release | debug) ;;
  *)
    echo "install-capi: unknown profile \`$profile\` (expected release or debug)" >&2
    exit 2
    ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
# Cargo's `dev` profile is the one whose output lands in target/debug.
cargo_profile="$profile"
[[ "$profile" == debug ]] && cargo_profile="dev"
target_dir="${CARGO_TARGET_DIR:-$root/target}/$profile"
include_dir="$root/crates/herald-capi/include"

# Always through cargo: a no-op when the library is up to date, and never a stale install.
echo "install-capi: cargo build -p herald-capi --profile $cargo_profile"
(cd "$root" && cargo build -q -p herald-capi --profile "$cargo_profile" --locked)
for file in "$target_dir/libherald.so" "$target_dir/libherald.a" \
  "$include_dir/herald.h" "$include_dir/herald.hpp"; do
  if [[ ! -f "$file" ]]; then
    echo "install-capi: $file is missing" >&2
    exit 1
  fi
done

# The version is the workspace's (Cargo.toml [workspace.package]).
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' \
  "$root/Cargo.toml" | head -n 1)"
if [[ -z "$version" ]]; then
  echo "install-capi: cannot read the version from $root/Cargo.toml" >&2
  exit 1
fi

mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)" # absolute: herald.pc and the CMake files name it
libdir="$prefix/lib"
includedir="$prefix/include"
mkdir -p "$libdir/pkgconfig" "$libdir/cmake/Herald" "$includedir"

# libherald.so.<version>, with the links the loader (the SONAME, libherald.so.<major>) and
# the linker (libherald.so) look for.
major="${version%%.*}"
install -m 0755 "$target_dir/libherald.so" "$libdir/libherald.so.$version"
ln -sf "libherald.so.$version" "$libdir/libherald.so.$major"
ln -sf "libherald.so.$major" "$libdir/libherald.so"
install -m 0644 "$target_dir/libherald.a" "$libdir/libherald.a"
# Every header of the crate: herald.h and herald.hpp, and what they include.
install -m 0644 "$include_dir"/*.h "$include_dir"/*.hpp "$includedir/"

# What libherald.a needs besides libc: pow() from libm; pthread and dl are part of libc since
# glibc 2.34 but separate libraries before (their stubs are harmless after).
static_libs="-lpthread -ldl -lm"
libs='-L${libdir} -lherald'
if [[ "$rpath" == 1 ]]; then
  libs="$libs"' -Wl,-rpath,${libdir}'
fi
cat >"$libdir/pkgconfig/herald.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: herald
Description: C and C++ client of Herald, the log, pub/sub and information-object service
Version: $version
Cflags: -I\${includedir}
Libs: $libs
Libs.private: $static_libs
EOF

cat >"$libdir/cmake/Herald/HeraldConfig.cmake" <<'EOF'
# Herald's C API for CMake: find_package(Herald REQUIRED), then
#   target_link_libraries(app PRIVATE Herald::herald)         # libherald.so
#   target_link_libraries(app PRIVATE Herald::herald_static)  # libherald.a
# Both give the include directory with herald.h and herald.hpp (C++17).
# Made by scripts/install-capi.sh; paths are relative to this file, so the prefix may move.
get_filename_component(_herald_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET Herald::herald)
  add_library(Herald::herald SHARED IMPORTED)
  set_target_properties(Herald::herald PROPERTIES
    IMPORTED_LOCATION "${_herald_prefix}/lib/libherald.so"
    IMPORTED_SONAME "libherald.so.@HERALD_MAJOR@"
    INTERFACE_INCLUDE_DIRECTORIES "${_herald_prefix}/include")
endif()

if(NOT TARGET Herald::herald_static)
  include(CMakeFindDependencyMacro)
  find_dependency(Threads)
  add_library(Herald::herald_static STATIC IMPORTED)
  set_target_properties(Herald::herald_static PROPERTIES
    IMPORTED_LOCATION "${_herald_prefix}/lib/libherald.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_herald_prefix}/include"
    # What the Rust standard library inside it needs from the system (see herald.pc).
    INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m")
endif()

unset(_herald_prefix)
EOF
sed -i "s/@HERALD_MAJOR@/$major/" "$libdir/cmake/Herald/HeraldConfig.cmake"

cat >"$libdir/cmake/Herald/HeraldConfigVersion.cmake" <<EOF
# The version of Herald's C API installed here; any request of the same major version
# (or, before 1.0, the same minor version) at or below it is compatible.
set(PACKAGE_VERSION "$version")
EOF
cat >>"$libdir/cmake/Herald/HeraldConfigVersion.cmake" <<'EOF'
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _herald_version "${PACKAGE_VERSION}")
  set(_herald_major "${CMAKE_MATCH_1}")
  set(_herald_minor "${CMAKE_MATCH_2}")
  if(NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL _herald_major)
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  elseif(_herald_major STREQUAL "0" AND NOT PACKAGE_FIND_VERSION_MINOR STREQUAL _herald_minor)
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  else()
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
  unset(_herald_version)
  unset(_herald_major)
  unset(_herald_minor)
endif()
# A 64-bit library: a 32-bit project cannot use it.
if(CMAKE_SIZEOF_VOID_P AND NOT CMAKE_SIZEOF_VOID_P EQUAL 8)
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
EOF

echo "install-capi: installed Herald $version ($profile) into $prefix"
echo "  C:     PKG_CONFIG_PATH=$libdir/pkgconfig cc app.c \$(pkg-config --cflags --libs herald)"
echo "  CMake: cmake -DCMAKE_PREFIX_PATH=$prefix …  (find_package(Herald), Herald::herald)"
if [[ "$rpath" == 0 ]]; then
  echo "  run:   LD_LIBRARY_PATH=$libdir ./app  (herald.pc has no rpath)"
fi
