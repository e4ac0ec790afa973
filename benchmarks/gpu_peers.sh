#!/usr/bin/env bash
# Unpack the GPU step's peers (benchmarks/gpu_step.py) and the notebook test runner (nbdev and what it needs) into one folder
# that a GPU machine without network puts on PYTHONPATH; run it where pip reaches PyPI. The GPU machine's own torch,
# triton and the packages its image already holds (numpy, pygments, pyyaml, httpx, ...) are used as they are.
#   bash benchmarks/gpu_peers.sh DIR [PYTHON_VERSION]      (default 3.12, the GPU image's Python)
#   then, on the GPU machine:  PYTHONPATH=DIR python3 benchmarks/gpu_step.py --record
# bitsandbytes keeps only its CPU and CUDA 13 libraries (torch 2.11's CUDA), and torchao no compiled kernels (its
# optimizers are Python and torch.compile), so that DIR is small enough to travel with the checkout (64 MiB in all).
set -euo pipefail
DIR=${1:?usage: bash benchmarks/gpu_peers.sh DIR [PYTHON_VERSION]}; PYVER=${2:-3.12}
PEERS="torch-optimi==0.3.3 flashoptim==0.1.4 bitsandbytes==0.50.2 torchao==0.18.0 schedulefree==1.4.1"
TESTS="nbdev==2.4.14 fastcore==1.14.5 execnb==0.1.18"  # with their dependencies, less those the GPU image has
ON_IMAGE="anyio certifi h11 httpcore httpx idna packaging psutil pygments pyyaml setuptools six typing_extensions wheel build
          pyproject_hooks"
WHEELS=$(mktemp -d)
target=(--only-binary=:all: --python-version "$PYVER" --implementation cp --platform manylinux_2_28_x86_64
        --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any)
python3 -m pip download -q "${target[@]}" --no-deps -d "$WHEELS" $PEERS
python3 -m pip download -q "${target[@]}" -d "$WHEELS" $TESTS
for name in $ON_IMAGE; do rm -f "$WHEELS/$name"-[0-9]*.whl; done
mkdir -p "$DIR"
for w in "$WHEELS"/*.whl; do python3 -m zipfile -e "$w" "$DIR"; done
find "$DIR/bitsandbytes" -name 'libbitsandbytes_*.so' ! -name '*_cpu.so' ! -name '*_cuda130.so' -delete
rm -rf "$DIR"/torchao/_C*.so "$DIR/test" "$DIR"/jedi* "$DIR"/parso*  # kernels the optimizers don't use; IPython runs without jedi
rm -rf "$WHEELS"
echo "$(ls "$DIR" | grep -c dist-info) packages, $(du -sh "$DIR" | cut -f1), in $DIR"
