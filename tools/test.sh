#!/usr/bin/env bash
# Set up a fresh clone and run every notebook's tests through pytest (one test per notebook).
# Extra arguments go to pytest: `bash tools/test.sh --flags "cuda slow"` also runs the GPU and slow cells.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
python3 -m pytest tests --durations=10 "$@"  # the ten slowest notebooks, to keep CI short
