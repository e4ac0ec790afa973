#!/usr/bin/env bash
# Run the notebook tests (one pytest test per notebook, as CI does) on CPU with another version of PyTorch, in a venv of its own.
#
#   bash tools/test_torch.sh VERSION [PYTEST ARGS...]      e.g.  bash tools/test_torch.sh 2.9.1 -k "10_sgd or 11_adam"
#
# The venv (default /tmp/optimi_nb-torch-VERSION, or $VENV) is made on the first run and reused after; it holds
# torch==VERSION from PyPI, which on x86_64 Linux is a CUDA build (a few GB with its nvidia-* packages: it runs on CPU
# too), and settings.ini's requirements and development tools (less the docs-only ones) at the versions pip finds for that
# torch. The package itself is not installed: the tests import it from this checkout through PYTHONPATH, so the run
# writes nothing into the repository. Nothing touches the global Python. torch < 2.4 was built against NumPy 1: numpy<2.
# Environment: PYTHON (the interpreter the venv is made from, default python3), VENV, PIP_ARGS (extra pip arguments,
# e.g. "--find-links DIR" for wheels downloaded beforehand).
# Exit status: pytest's. The last line names the versions: "test_torch: torch 2.9.1+cu128, Python 3.11.7: 30 passed ...".
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
numpy="numpy"
if [[ "$VERSION" =~ ^(1\.|2\.[0-3](\.|$)) ]]; then numpy="numpy<2"; fi  # torch.from_numpy fails under NumPy 2 before torch 2.4
requirements=$("$PY" -c '
import configparser, shlex
cfg = configparser.ConfigParser(delimiters=["="]); cfg.read("settings.ini")
docs_only = ("smalldocs", "ipykernel")  # the notebooks run in execnb in-process shell, without a Jupyter kernel
wanted = shlex.split(cfg["DEFAULT"]["requirements"]) + shlex.split(cfg["DEFAULT"]["dev_requirements"])
print("\n".join(r for r in wanted if not r.startswith(docs_only) and not (r.startswith("torch") and not r.startswith("torch-"))))')
# torch==VERSION and everything else, resolved together so that no requirement moves torch; pip does nothing when all
# are there. PIP_CONSTRAINT= : this machine's pip configuration may cap torch; the venv asks for one exact release.
echo "test_torch: torch==$VERSION and the requirements in $VENV"
PIP_CONSTRAINT= "$PY" -m pip install -q ${PIP_ARGS:-} "torch==$VERSION" "$numpy" $requirements
fastai=$(sed -n 's/.*install --no-deps \(fastai==[0-9.]*\).*/\1/p' tools/setup.sh)  # as tools/setup.sh installs it: without torchvision
PIP_CONSTRAINT= "$PY" -m pip install -q --no-deps ${PIP_ARGS:-} "$fastai"

versions=$("$PY" -c "import platform, torch; print(f'torch {torch.__version__}, Python {platform.python_version()}')")
echo "test_torch: $versions, CPU only"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" MPLBACKEND=Agg CUDA_VISIBLE_DEVICES=""
set +e
"$PY" -m pytest tests -q -p no:cacheprovider "$@" 2>&1 | tee "$VENV/pytest.log"
status=${PIPESTATUS[0]}
set -e
# no summary line under a doubled -q: say so, rather than stop here (pipefail) and lose pytest's status
summary=$(grep -E '(passed|failed|error)' "$VENV/pytest.log" | tail -1 | tr -d '=' | sed 's/^ *//; s/ *$//' || true)
summary=${summary:-"no summary line (pytest -qq); see the log"}
echo "test_torch: $versions: $summary; failed: $(grep -oE '^FAILED tests/test_notebooks.py::test_notebook\[[^]]+\]' "$VENV/pytest.log" | sed 's/.*\[//; s/\]//' | tr '\n' ' ') (log: $VENV/pytest.log)"
exit $status
