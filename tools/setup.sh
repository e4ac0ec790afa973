#!/usr/bin/env bash
# Set up a fresh clone: PyTorch (only if none is installed, so Colab and GPU machines keep theirs), then this package
# in editable mode with its development tools and the frameworks the chapters are tested inside.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import torch" 2>/dev/null || python3 -m pip install torch==2.13.0
python3 -m pip install -e ".[dev]"
# fastai without its dependencies: they would pull torchvision, whose PyPI build breaks beside a CPU torch; the
# frameworks chapter needs only fastai's training loop (its other dependencies are in settings.ini's dev_requirements).
# 2.8.7 is the newest fastai that accepts fastcore 1.x, which nbdev 2 needs.
python3 -m pip install --no-deps fastai==2.8.7
