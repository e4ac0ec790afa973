#!/usr/bin/env bash
# GPU check (issue 12): on a CUDA machine, run everything GPU-specific and write the results into the repo.
#   tests      every notebook's tests with the `#| cuda` and `#| slow` cells (the CI entry, tests/test_notebooks.py)
#   benchmark  benchmarks/benchmark.py --device cuda -> nbs/benchmark_cuda.json (12.6M parameters in 72 tensors) and
#              nbs/benchmark_cuda_gpt2.json (GPT-2 small's 124M parameters in 148 tensors), the GPU's name in `device`;
#              benchmarks/speed_8bit.py --device cuda -> section speed_8bit_cuda of nbs/measured.json (chapter 35's GPU table)
#   notebooks  the `#| cuda` cells of every chapter that has them, re-executed and their outputs stored
#              (tools/store_cuda_outputs.py: the other cells keep their stored outputs)
# The GPU machine needs no network. Its Python must already have torch (and triton, for the compiled path); the rest
# (nbdev, fastcore, execnb, matplotlib, pytest, torch-optimi for the benchmark's comparison rows, ...) is installed from a
# folder of wheels that the download mode fills on a machine with network, for the GPU machine's Python version.
# torch, triton and nvidia-* packages are never downloaded or installed, and this package is installed with --no-deps.
#
# On the GPU machine:   bash tools/gpu_check.sh [--wheels DIR] [--steps install,tests,benchmark,notebooks] [--out DIR]
#   --wheels DIR   install the missing tools from DIR first (the install step); without it they must be installed already
#   --steps LIST   run only these steps, comma-separated (default: all; install only with --wheels)
#   --out DIR      copy the logs and every file the run wrote (benchmark JSONs, notebooks) into DIR, keeping their paths
#   environment:   PYTHON (default python3), PYTEST_ARGS (extra pytest arguments, e.g. "-k 34_low"),
#                  BENCHMARK_ARGS (extra benchmark arguments, e.g. "--rounds 20 --optimizers AdamW SGD")
# With network:         bash tools/gpu_check.sh --download DIR --python-version 3.12 [--platform manylinux_2_28_x86_64]
#   --platform     the GPU machine's wheel platform (default manylinux_2_28_x86_64: glibc 2.28 or newer, as torch >= 2.6
#                  wheels need; manylinux_2_28_aarch64 for an ARM host)
# Without a CUDA GPU it prints one line saying so and exits with status 1.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PYTHON=${PYTHON:-python3}
OPTIMI="torch-optimi==0.3.3"  # the reference library of the benchmark's comparison rows (its dependency on torch is not followed)
WHEELS="" STEPS="" OUT="" DOWNLOAD="" PYVER="" PLATFORM="manylinux_2_28_x86_64"
while [ $# -gt 0 ]; do
  case "$1" in
    --wheels) WHEELS=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --download) DOWNLOAD=$2; shift 2 ;;
    --python-version) PYVER=$2; shift 2 ;;
    --platform) PLATFORM=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# The tools the checks need: the dev requirements of settings.ini, less the docs-only ones, plus optimi's undeclared
# `packaging`. setuptools and wheel are there for building this package (editable) in pip's isolated build environment.
requirements() {
  "$PYTHON" - <<'EOF'
import configparser, shlex
cfg = configparser.ConfigParser(delimiters=["="]); cfg.read("settings.ini")
docs_only = ("smalldocs", "ipykernel")  # the notebooks run in execnb's in-process shell, without a Jupyter kernel
print("\n".join(["packaging"] + [r for r in shlex.split(cfg["DEFAULT"]["dev_requirements"]) if not r.startswith(docs_only)]))
EOF
}

if [ -n "$DOWNLOAD" ]; then
  [ -n "$PYVER" ] || { echo "gpu_check: --download needs --python-version, e.g. 3.12 (the GPU machine's Python)" >&2; exit 2; }
  mkdir -p "$DOWNLOAD" || exit 2
  requirements > "$DOWNLOAD/gpu_check_requirements.txt" || exit 2
  target=(--only-binary=:all: --python-version "$PYVER" --implementation cp --platform "$PLATFORM")
  if [[ "$PLATFORM" =~ ^manylinux_2_([0-9]+)_(.+)$ ]]; then  # pip does not widen a manylinux tag to the older ones it implies
    for ((v = BASH_REMATCH[1] - 1; v >= 5; v--)); do target+=(--platform "manylinux_2_${v}_${BASH_REMATCH[2]}"); done
    for legacy in manylinux2014 manylinux2010 manylinux1; do target+=(--platform "${legacy}_${BASH_REMATCH[2]}"); done
  fi
  echo "downloading for Python $PYVER on $PLATFORM into $DOWNLOAD:" $(tr '\n' ' ' < "$DOWNLOAD/gpu_check_requirements.txt") "$OPTIMI setuptools wheel"
  "$PYTHON" -m pip download --dest "$DOWNLOAD" "${target[@]}" -r "$DOWNLOAD/gpu_check_requirements.txt" "setuptools>=64" wheel || exit 1
  "$PYTHON" -m pip download --dest "$DOWNLOAD" "${target[@]}" --no-deps "$OPTIMI" || exit 1
  heavy=$(ls "$DOWNLOAD" | grep -Ei '^(torch-[0-9]|triton-|nvidia[-_])')
  if [ -n "$heavy" ]; then echo "gpu_check: these must come with the GPU machine's own torch, not from here: $heavy" >&2; exit 1; fi
  echo "$(ls "$DOWNLOAD"/*.whl | wc -l) wheels, $(du -sh "$DOWNLOAD" | cut -f1), in $DOWNLOAD; on the GPU machine: bash tools/gpu_check.sh --wheels $DOWNLOAD"
  exit 0
fi

# One line, and status 1, without a GPU.
GPU=$("$PYTHON" -c "
import platform, sys
try: import torch
except ImportError: print(f'gpu_check: torch is not importable by {sys.executable}; install torch for this GPU first'); sys.exit(2)
if not torch.cuda.is_available(): print(f'gpu_check: no CUDA GPU visible to torch {torch.__version__} (torch.cuda.is_available() is False); nothing run'); sys.exit(1)
print(f'{torch.cuda.get_device_name()}, torch {torch.__version__}, CUDA {torch.version.cuda}, Python {platform.python_version()}')
" 2>/dev/null)
status=$?
if [ $status -ne 0 ]; then echo "${GPU:-gpu_check: $PYTHON could not check for a GPU}"; exit $status; fi
echo "gpu_check on $GPU"

[ -n "$STEPS" ] || STEPS="tests,benchmark,notebooks${WHEELS:+,install}"
has() { [[ ",$STEPS," == *",$1,"* ]]; }
LOGS=${OUT:+$OUT/logs}; LOGS=${LOGS:-${TMPDIR:-/tmp}/gpu_check_logs}
mkdir -p "$LOGS"
echo "$GPU" > "$LOGS/device.txt"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"  # the package importable from the notebooks' folder even if the editable install fails
export MPLBACKEND=Agg
declare -A RESULT

if has install; then
  [ -n "$WHEELS" ] || { echo "gpu_check: the install step needs --wheels DIR" >&2; exit 2; }
  torch_before=$("$PYTHON" -c "import torch; print(torch.__version__)")
  {
    "$PYTHON" -m pip install --no-index --find-links "$WHEELS" -r "$WHEELS/gpu_check_requirements.txt" &&
    "$PYTHON" -m pip install --no-index --find-links "$WHEELS" --no-deps "$OPTIMI" &&
    { "$PYTHON" -m pip install --no-index --find-links "$WHEELS" --no-deps -e . ||
      echo "gpu_check: the editable install failed; the package is used from $ROOT through PYTHONPATH"; }
  } 2>&1 | tee "$LOGS/install.log"
  rc=${PIPESTATUS[0]}
  torch_after=$("$PYTHON" -c "import torch; print(torch.__version__)")
  if [ "$torch_before" != "$torch_after" ]; then echo "gpu_check: torch changed from $torch_before to $torch_after during the install" | tee -a "$LOGS/install.log"; rc=1; fi
  RESULT[install]=$rc
  if [ $rc -ne 0 ]; then echo "gpu_check: install failed (log: $LOGS/install.log)"; exit 1; fi
fi
missing=$("$PYTHON" -c "
import importlib.util
print(' '.join(m for m in ('nbdev', 'execnb', 'fastcore', 'matplotlib', 'pytest') if importlib.util.find_spec(m) is None))")
if [ -n "$missing" ]; then echo "gpu_check: missing $missing; pass --wheels DIR (filled by --download on a machine with network)"; exit 2; fi

if has tests; then
  echo "== tests: every notebook, with the cuda and slow cells"
  "$PYTHON" -m pytest tests -q -p no:cacheprovider --flags "cuda slow" ${PYTEST_ARGS:-} 2>&1 | tee "$LOGS/tests.log"
  RESULT[tests]=${PIPESTATUS[0]}
fi

if has benchmark; then
  echo "== benchmark on the GPU"
  rc=0
  "$PYTHON" benchmarks/benchmark.py --device cuda --json nbs/benchmark_cuda.json ${BENCHMARK_ARGS:-} 2>&1 | tee "$LOGS/benchmark_cuda.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
  "$PYTHON" benchmarks/benchmark.py --device cuda --shapes gpt2 --json nbs/benchmark_cuda_gpt2.json ${BENCHMARK_ARGS:-} 2>&1 | tee "$LOGS/benchmark_cuda_gpt2.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
  "$PYTHON" benchmarks/speed_8bit.py --device cuda --rounds 40 --record 2>&1 | tee "$LOGS/speed_8bit_cuda.log"  # chapter 35's GPU table
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
  RESULT[benchmark]=$rc
fi

if has notebooks; then
  echo "== the chapters' #| cuda cells, outputs stored"
  "$PYTHON" tools/store_cuda_outputs.py 2>&1 | tee "$LOGS/notebooks.log"
  RESULT[notebooks]=${PIPESTATUS[0]}
fi

if [ -n "$OUT" ]; then
  for f in nbs/benchmark_cuda.json nbs/benchmark_cuda_gpt2.json nbs/measured.json $(grep -l '"#| cuda' nbs/*.ipynb); do
    [ -f "$f" ] && mkdir -p "$OUT/$(dirname "$f")" && cp "$f" "$OUT/$f"
  done
fi

failed=0
for step in install tests benchmark notebooks; do
  [ -n "${RESULT[$step]:-}" ] || continue
  if [ "${RESULT[$step]}" -eq 0 ]; then echo "gpu_check: $step passed"; else echo "gpu_check: $step FAILED (log: $LOGS/$step*.log)"; failed=1; fi
done
exit $failed
