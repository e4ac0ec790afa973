#!/usr/bin/env bash
# Set up a fresh clone and run every notebook's tests through pytest (one test per notebook).
# Extra arguments go to pytest: `bash tools/test.sh --flags "cuda slow"` also runs the GPU and slow cells.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# Notebooks run side by side, one per core (pytest-xdist); with the slow cells on, one at a time: they measure speed.
workers=(-n auto --maxprocesses 4 --dist worksteal) flag=""
for arg in "$@"; do
  if [[ "$flag" == --flags && "$arg" == *slow* || "$arg" == --flags=*slow* ]]; then workers=(-n 0); fi
  flag=$arg
done
python3 -m pytest tests "${workers[@]}" --durations=10 "$@"  # the ten slowest notebooks, to keep CI short
