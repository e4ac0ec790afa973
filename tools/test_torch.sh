#!/usr/bin/env bash
# Run the notebook tests (one pytest test per notebook, as CI does) on CPU with another version of PyTorch, in a venv of its own.
#
#   bash tools/test_torch.sh VERSION [PYTEST ARGS...]      e.g.  bash tools/test_torch.sh 2.9.1 -k "10_sgd or 11_adam"
#
# The venv (default /tmp/optimi_nb-torch-VERSION, or $VENV) is made on the first run and reused after; it holds
# torch==VERSION from PyPI, which on x86_64 Linux is a CUDA build (a few GB with its nvidia-* packages: it runs on CPU
# too) and settings.ini's development tools (less the docs-only ones). The package itself is not installed: the tests
# import it from this checkout through PYTHONPATH, so the run writes nothing into the repository. Nothing touches the
# global Python. For torch < 2.4, which was built against NumPy 1, numpy<2 is installed.
# Environment: PYTHON (the interpreter the venv is made from, default python3), VENV, PIP_ARGS (extra pip arguments).
# Exit status: pytest's. The last line names the versions: "torch 2.9.1+cu128, Python 3.11.x: ... passed ...".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VERSION=${1:?usage: bash tools/test_torch.sh VERSION [PYTEST ARGS...]   (e.g. 2.9.1)}
shift
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || { echo "test_torch: '$VERSION' is not a torch release number like 2.9.1" >&2; exit 2; }
PYTHON=${PYTHON:-python3}
VENV=${VENV:-${TMPDIR:-/tmp}/optimi_nb-torch-$VERSION}

if [ ! -x "$VENV/bin/python" ]; then "$PYTHON" -m venv "$VENV"; fi
PY="$VENV/bin/python"
have=$("$PY" -c "import torch; print(torch.__version__.split('+')[0])" 2>/dev/null || true)
if [ "$have" != "$VERSION" ]; then
  echo "test_torch: installing torch==$VERSION into $VENV"
  # PIP_CONSTRAINT= : this machine's pip configuration may cap torch's version; the venv asks for exactly one release
  PIP_CONSTRAINT= "$PY" -m pip install -q ${PIP_ARGS:-} "torch==$VERSION"
fi
numpy="numpy"
if "$PY" -c "import sys, torch; v = tuple(int(x) for x in torch.__version__.split('+')[0].split('.')[:2]); sys.exit(v >= (2, 4))"; then
  numpy="numpy<2"  # torch 2.3 and older were built against NumPy 1 (torch.from_numpy fails with NumPy 2)
fi
requirements=$("$PY" - <<'EOF'
import configparser, shlex
cfg = configparser.ConfigParser(delimiters=["="]); cfg.read("settings.ini")
docs_only = ("smalldocs", "ipykernel")  # the notebooks run in execnb's in-process shell, without a Jupyter kernel
print("\n".join(r for r in shlex.split(cfg["DEFAULT"]["dev_requirements"]) if not r.startswith(docs_only)))
EOF
)
missing=$("$PY" -c "
import importlib.util
print(' '.join(m for m in ('nbdev', 'execnb', 'fastcore', 'matplotlib', 'pytest', 'numpy') if importlib.util.find_spec(m) is None))")
if [ -n "$missing" ]; then
  echo "test_torch: installing the development tools ($missing missing)"
  PIP_CONSTRAINT= "$PY" -m pip install -q ${PIP_ARGS:-} $requirements "$numpy" "torch==$VERSION"
fi

versions=$("$PY" -c "import platform, torch; print(f'torch {torch.__version__}, Python {platform.python_version()}')")
echo "test_torch: $versions, CPU only"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" MPLBACKEND=Agg CUDA_VISIBLE_DEVICES=""
set +e
"$PY" -m pytest tests -q -p no:cacheprovider "$@" 2>&1 | tee "$VENV/pytest.log"
status=${PIPESTATUS[0]}
set -e
echo "test_torch: $versions: $(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed).* =+$' "$VENV/pytest.log" | tail -1 | tr -d '=' | sed 's/^ *//; s/ *$//') (log: $VENV/pytest.log)"
exit $status
