# shellcheck shell=bash
# onnxruntime-node for the bench scripts, installed once per machine from npm. Source it after
# reading the caller's settings, then call ort_install:
#
#   source "$ROOT/bench/ort_install.sh"   # ORT_DIR, ORT_VERSION default here
#   ort_install || die "..."              # installs when missing, exports NODE_PATH
#
#   ORT_DIR=~/.cache/footprint/ort   where it is installed (shared by every script and checkout)
#   ORT_VERSION=1.30.0               the version the figures in docs/BENCHMARKS.md were taken with

ORT_DIR=${ORT_DIR:-$HOME/.cache/footprint/ort}
ORT_VERSION=${ORT_VERSION:-1.30.0}

# Installs onnxruntime-node@ORT_VERSION into ORT_DIR unless that version is there, exports
# NODE_PATH and checks that node loads it. Returns 1, with a line on stderr, when it cannot.
ort_install() {
  local c pkg=$ORT_DIR/node_modules/onnxruntime-node/package.json
  for c in node npm; do
    if ! command -v "$c" >/dev/null; then
      echo "ort_install: $c not found (Debian packages nodejs and npm)" >&2
      return 1
    fi
  done
  if [[ ! -f $pkg ]] || [[ $(node -p "require('$pkg').version" 2>/dev/null) != "$ORT_VERSION" ]]; then
    echo "ort_install: installing onnxruntime-node@$ORT_VERSION into $ORT_DIR" >&2
    mkdir -p "$ORT_DIR"
    # The package's postinstall only downloads the CUDA provider; the CPU libonnxruntime.so ships
    # inside the package, so --ignore-scripts is enough.
    if ! npm install --prefix "$ORT_DIR" "onnxruntime-node@$ORT_VERSION" --ignore-scripts \
      --no-audit --no-fund >&2; then
      echo "ort_install: npm install onnxruntime-node@$ORT_VERSION failed" >&2
      return 1
    fi
  fi
  export NODE_PATH=$ORT_DIR/node_modules
  if ! node -e "require('onnxruntime-node')" 2>/dev/null; then
    echo "ort_install: onnxruntime-node does not load from $NODE_PATH (remove $ORT_DIR and rerun)" >&2
    return 1
  fi
}
