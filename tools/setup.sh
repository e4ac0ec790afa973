#!/usr/bin/env bash
# Set up a fresh clone: PyTorch (only if none is installed, so Colab and GPU machines keep theirs), then this package
# in editable mode with its development tools.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import torch" 2>/dev/null || python3 -m pip install torch==2.13.0
python3 -m pip install -e ".[dev]"
