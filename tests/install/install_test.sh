#!/usr/bin/env bash
# Installs tfjit into a temporary prefix and builds two programs against it outside the source
# tree, as a user would: examples/embed through the CMake package (find_package(tfjit CONFIG)),
# and a one-file program through pkg-config. Both run a real graph, and their outputs must equal
# the tfjit CLI's on the same inputs.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build="$1" src="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
for f in include/tfjit/session.h include/tfjit/tensor.h lib/libtfjit.so bin/tfjit \
         lib/cmake/tfjit/tfjitConfig.cmake lib/pkgconfig/tfjit.pc; do
  [ -e "$tmp/prefix/$f" ] || fail "the install has no $f"
done
# Only the public API is exported: no LLVM or internal-layer symbols.
if nm -D --defined-only "$tmp/prefix/lib/libtfjit.so" | grep -q " llvm::\| _ZN4llvm"; then
  fail "libtfjit.so exports LLVM symbols"
fi

model="$src/tests/tf/graphs/matmul.pbtxt"
# The installed CLI's answer with every input 1 (the embed program's inputs), fed as .npy files.
# (Python's standard library only: each float Placeholder of the text graph gets an array of
# ones of its declared shape.)
mapfile -t inputs < <(/usr/bin/python3 - "$model" "$tmp" <<'PY'
import re, struct, sys
model, out = sys.argv[1], sys.argv[2]
for line in open(model):
    m = re.match(r'node \{ name: "([^"]+)" op: "Placeholder"(.*)', line)
    if not m:
        continue
    name, rest = m.group(1), m.group(2)
    dims = [int(d) for d in re.findall(r"dim \{ size: (\d+) \}", rest)]
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(
        f"{d}, " for d in dims)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    count = 1
    for d in dims:
        count *= d
    path = f"{out}/{name}.npy"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % count, *([1.0] * count)))
    print("--input")
    print(f"{name}={path}")
PY
)
"$tmp/prefix/bin/tfjit" run "$model" "${inputs[@]}" >"$tmp/cli.txt" 2>&1 ||
  { cat "$tmp/cli.txt"; fail "the installed CLI"; }

# 1. The CMake package, from a copy of examples/embed outside the source tree.
cp -r "$src/examples/embed" "$tmp/embed"
cmake -S "$tmp/embed" -B "$tmp/embed-build" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  >"$tmp/embed-configure.log" 2>&1 || { cat "$tmp/embed-configure.log"; fail "configure embed"; }
cmake --build "$tmp/embed-build" >"$tmp/embed-build.log" 2>&1 ||
  { cat "$tmp/embed-build.log"; fail "build embed"; }
"$tmp/embed-build/embed" "$model" >"$tmp/embed.txt" 2>&1 || { cat "$tmp/embed.txt"; fail "run embed"; }
grep -q "compiled clusters: [1-9]" "$tmp/embed.txt" || { cat "$tmp/embed.txt"; fail "embed compiled nothing"; }

# 2. pkg-config, one command line.
cat >"$tmp/tiny.cc" <<'CC'
#include <cstdio>
#include "tfjit/session.h"
int main(int argc, char** argv) {
  auto session = tfjit::Session::Load(argv[1]);
  if (!session.ok()) { std::printf("%s\n", session.status().ToString().c_str()); return 1; }
  std::printf("inputs %zu\n", (*session)->Inputs().size());
  return 0;
}
CC
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" c++ "$tmp/tiny.cc" -o "$tmp/tiny" \
  $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs tfjit) \
  >"$tmp/tiny.log" 2>&1 || { cat "$tmp/tiny.log"; fail "pkg-config build"; }
"$tmp/tiny" "$model" | grep -q "^inputs [1-9]" || fail "the pkg-config program did not load the model"

# The embedded run equals the CLI's: each fetch's shape and first values.
numbers() { grep -oE -- '-?[0-9][0-9.e+-]*' | head -4 | tr '\n' ' '; }
checked=0
while read -r name shape rest; do
  line="$(grep -- "^$name " "$tmp/cli.txt")" || { cat "$tmp/cli.txt"; fail "the CLI has no $name"; }
  [ "$(echo "$line" | awk '{print $2}')" = "$shape" ] || fail "$name: shape $shape, CLI: $line"
  [ "$(echo "$rest" | numbers)" = "$(echo "$line" | sed 's/^[^ ]* [^ ]* //' | numbers)" ] ||
    fail "$name: embed gives '$rest', the CLI '$line'"
  checked=$((checked + 1))
done < <(grep -v "^compiled" "$tmp/embed.txt")
[ "$checked" -gt 0 ] || fail "embed printed no fetch"
# 3. The Python module, from the prefix.
if ls "$tmp/prefix/lib/python3/dist-packages/"tfjit*.so >/dev/null 2>&1; then
  PYTHONPATH="$tmp/prefix/lib/python3/dist-packages" /usr/bin/python3 -c "
import sys, tfjit
m = tfjit.load(sys.argv[1])
assert [i[0] for i in m.inputs][:2] == ['a', 'b'], m.inputs
" "$model" || fail "the installed Python module"
else
  echo "install_test: no Python module installed (pybind11-dev missing); not checked"
fi
cat "$tmp/embed.txt"
echo "install_test: installed; embed (CMake package) and a pkg-config program built outside the tree, ran, and match the CLI ($checked fetches)"
