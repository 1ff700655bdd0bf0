#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# cmake --install into a scratch prefix, then build the example agent
# against the installed library with pkg-config (examples/Makefile) and with
# find_package(cgstats), and run the installed binary.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d /tmp/tsc-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

command -v make >/dev/null || { echo "SKIP: make missing"; exit 77; }
command -v "${CC:-cc}" >/dev/null || { echo "SKIP: no C compiler"; exit 77; }

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name libcgstats.pc -printf '%h\n' | head -1)
libdir=${libdir%/pkgconfig}
for f in include/cgstats.h sbin/taskstat-collect share/man/man8/taskstat-collect.8 \
	bin/taskstat-top share/man/man1/taskstat-top.1; do
	test -e "$prefix/$f" || { echo "FAIL: $f not installed"; exit 1; }
done
test -x "$prefix/sbin/taskstat-query" && test -e "$prefix/share/man/man8/taskstat-query.8" ||
	{ echo "FAIL: taskstat-query not installed"; exit 1; }
test -e "$libdir/cmake/cgstats/cgstatsConfig.cmake" || { echo "FAIL: no CMake package"; exit 1; }
for c in taskstat-collect taskstat-top taskstat-query; do # issue 38
	test -e "$prefix/share/bash-completion/completions/$c" ||
		{ echo "FAIL: no bash completion for $c"; exit 1; }
done
ls "$prefix"/share/doc/*/examples/taskstat-collect.service >/dev/null

# pkg-config consumer: the examples' own Makefile, outside the tree.
cp "$src/examples/Makefile" "$src/examples/cgs-top.c" \
	"$src/examples/agent-defaults.c" "$tmp/"
PKG_CONFIG_PATH=$libdir/pkgconfig make -s -C "$tmp" >/dev/null
test -x "$tmp/cgs-top" && test -x "$tmp/agent-defaults"
LD_LIBRARY_PATH=$libdir "$tmp/cgs-top" 0 2>/dev/null && { echo "FAIL: cgs-top accepted 0"; exit 1; }

# CMake consumer.
mkdir "$tmp/cm"
cat > "$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(cgstats REQUIRED)
add_executable(cgs-top ../cgs-top.c)
target_link_libraries(cgs-top PRIVATE cgstats::cgstats)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/cm/b" >/dev/null
test -x "$tmp/cm/b/cgs-top"

LD_LIBRARY_PATH=$libdir "$prefix/sbin/taskstat-collect" --version | grep -q '^taskstat-collect '
grep -q '^\.SH CAPTURE FORMAT' "$prefix/share/man/man8/taskstat-collect.8"
echo ok
