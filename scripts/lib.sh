# Shared by scripts/run, scripts/test and scripts/fuzz: installs what is missing and builds.
# shellcheck shell=bash

FOOTPRINT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian 12 packages footprint builds and tests with. Every package a CMake find_package or
# find_library of ours resolves to must be here or be a dependency (not a recommendation) of one
# that is: scripts/check-deps verifies that in scripts/test. ocl-icd-opencl-dev is an example:
# Debian's oneDNN is built with its OpenCL GPU runtime, so dnnl-config.cmake requires OpenCL,
# while libdnnl-dev only recommends the package. libomp-14-dev is clang's OpenMP, which the fuzz
# preset (clang) finds where g++ uses its own libgomp. The Python package (python/) builds against
# Debian's python3 with pybind11-dev and is tested with Debian's numpy and pytest.
FOOTPRINT_PACKAGES=(
  g++ cmake ninja-build clang libclang-rt-14-dev libomp-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libonnx-dev libprotobuf-dev libonnx-testdata
  libdnnl-dev ocl-icd-opencl-dev
  libxxhash-dev libsqlite3-dev
  zlib1g-dev chromium
  clang-format
  pybind11-dev python3-dev python3-numpy python3-pytest python3-setuptools
)
# The model zoo's exporter (tests/zoo/zoo.sh, run by scripts/test): Debian's PyTorch 1.13 with
# torchvision and torchaudio, and the onnx module for reading reference outputs; libtorch-dev,
# the headers footprint.torch's recorder engine compiles against on first use
# (python/footprint/_torch_engine.py). Only the tests need them, so scripts/run does not
# install them.
FOOTPRINT_ZOO_PACKAGES=(python3-torch python3-torchvision python3-torchaudio python3-onnx
  python3-numpy libtorch-dev)
# Packages needed only for a command they provide, installed when the command is missing:
# node and npm run onnxruntime-node (bench/example_vs_ort.sh in scripts/test). A node from
# elsewhere is kept: NodeSource's nodejs bundles npm and conflicts with Debian's npm package.
FOOTPRINT_COMMAND_PACKAGES=(node:nodejs npm:npm)

log() { printf '==> %s\n' "$*" >&2; }

# ensure_packages [PACKAGE...]: installs the missing ones (default: FOOTPRINT_PACKAGES and the
# command packages) with apt-get when root; otherwise prints the command and fails.
ensure_packages() {
  local missing=() wanted=("$@")
  [ ${#wanted[@]} -gt 0 ] || wanted=("${FOOTPRINT_PACKAGES[@]}")
  for p in "${wanted[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ $# -eq 0 ]; then
    for c in "${FOOTPRINT_COMMAND_PACKAGES[@]}"; do
      command -v "${c%%:*}" >/dev/null || missing+=("${c#*:}")
    done
  fi
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  if [ "$(id -u)" -eq 0 ]; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "footprint: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
}

# build PRESET [TARGET...]: configure (once) and build a CMake preset. Where ccache is installed
# (it is not a dependency: a fresh machine builds without it), compiles go through it with paths
# taken relative to this checkout, so a fresh clone on a machine that built footprint before (CI)
# reuses the objects instead of compiling three presets from nothing.
build_preset() {
  local preset="$1"
  shift
  cd "$FOOTPRINT_ROOT"
  if [ ! -f "build/$preset/build.ninja" ]; then
    log "configuring $preset"
    local launcher=()
    if command -v ccache >/dev/null; then
      launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    fi
    cmake --preset "$preset" "${launcher[@]}" >/dev/null
  fi
  export CCACHE_BASEDIR="$FOOTPRINT_ROOT" CCACHE_NOHASHDIR=true
  log "building $preset"
  if [ $# -gt 0 ]; then
    cmake --build --preset "$preset" --target "$@"
  else
    cmake --build --preset "$preset"
  fi
}
