#!/usr/bin/env bash
# Set up a fresh clone and build the documentation site offline into _docs/ (open _docs/index.html; search works from
# disk), and README.md from index.ipynb, whose stale tables it first makes anew. `python3 tools/check_site.py` then
# opens every page in headless Chromium.
# Needs Python and, for KaTeX (served from the site itself), npm: installed here with apt-get when missing (as root, or
# through sudo), so a machine with only Python and apt is enough.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null && [ ! -f .build/node_modules/katex/dist/katex.min.js ]; then
  echo "docs.sh: npm not found; installing it with apt-get (for KaTeX)"
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends npm >/dev/null
fi
bash tools/setup.sh
python3 tools/stale_outputs.py --write  # the front page's tables, made anew from measured.json where their source changed
python3 tools/build_site.py "$@"
