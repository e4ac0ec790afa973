#!/usr/bin/env bash
# Set up a fresh clone and build the documentation site offline into _docs/ (open _docs/index.html; search works from
# disk), and README.md from index.ipynb. `python3 tools/check_site.py` then opens every page in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
python3 tools/build_site.py "$@"
