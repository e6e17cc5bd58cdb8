#!/usr/bin/env bash
# Installs the Debian 12 packages tfjit needs, only those that are missing.
set -euo pipefail

# pkg-config: tests/install checks the installed tfjit.pc. python3-dev, pybind11-dev,
# python3-numpy: the tfjit Python module (python/) and its tests. graphviz: explain --format
# svg. doxygen: the API reference (api_docs). clang-format-19: .ci/run's layout check
# (scripts/check_format.sh).
# libcpp-httplib-dev, rapidjson-dev, libgrpc++-dev, protobuf-compiler-grpc: tfjit serve
# (serving/): the HTTP/1.1 server, the JSON reader that takes TF Serving's NaN and Infinity
# tokens, and gRPC with its protoc plugin; wrk: bench/serve_load.sh's load generator.
# libzstd-dev: LLVM 19's CMake package names zstd::libzstd_shared in LLVMSupport's link
# interface, and configuring fails without it (llvm-19-dev does not pull it in).
PACKAGES=(
  cmake ninja-build g++ lld ccache python3 flock pkg-config
  python3-dev pybind11-dev python3-numpy graphviz doxygen
  llvm-19-dev llvm-19-tools libzstd-dev clang-format-19
  libabsl-dev libeigen3-dev libprotobuf-dev protobuf-compiler
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  libxnnpack-dev libpthreadpool-dev
  libleveldb-dev libsnappy-dev
  libcpp-httplib-dev rapidjson-dev libgrpc++-dev protobuf-compiler-grpc wrk
  nodejs npm
)

missing=()
for p in "${PACKAGES[@]}"; do
  [ "$p" = flock ] && { command -v flock >/dev/null || missing+=(util-linux); continue; }
  # node and npm (the TF.js reference of tests/models) may come from another packaging of
  # Node.js (it ships npm inside): only the commands matter.
  [ "$p" = nodejs ] && { command -v node >/dev/null || missing+=(nodejs); continue; }
  [ "$p" = npm ] && { command -v npm >/dev/null || missing+=(npm); continue; }
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "tfjit: installing missing packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "tfjit: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
# Only refresh the package lists when a package cannot be found in the current ones.
if ! $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
