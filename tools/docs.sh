#!/usr/bin/env bash
# Set up a fresh clone and build the documentation site offline into _docs/ (open _docs/index.html).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
python3 tools/build_site.py
