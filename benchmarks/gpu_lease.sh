#!/usr/bin/env bash
# Issue #40's GPU checks in one call on a GPU machine without network, in the order asked (by default what matters most
# first: what the last lease left unmeasured), each step started only while the call's budget still holds its usual
# time, and each stopped at what is left of the budget:
#   tests     the GPU cells of Compiled calls and Step graphs, their outputs stored (tools/store_cuda_outputs.py)
#   bandwidth one AdamW step of 8 x 8192^2 in every storage against its floor (benchmarks/gpu_step.py --record)
#   arith     the int8 and int4 steps with cheaper arithmetic, side by side (benchmarks/arithmetic_trials.py --record)
#   hand      the int4 step as one kernel written by hand, a trial (benchmarks/int4_kernel_trial.py --time --record)
#   memory    the memory lab's GPU peaks in every storage, with and without release, eager and compiled (chapter 30)
#   tuning    the bf16 + Kahan and int8 steps under three sets of launch settings (benchmarks/kernel_tuning.py --record)
#   gpt2      one AdamW step of GPT-2 small's 148 tensors, every row (--record)
#   train     the training step with and without gradient release (--record; leftover.txt names what stays allocated)
#   check     every element-wise optimizer and storage on the GPU against the CPU (--record)
#   pairs     int4 states encoded by byte pairs against in order, 8 x 8192^2 (benchmarks/pairs_4bit.py --record)
# Figures go to nbs/measured.json (sections kernel_tuning_cuda, gpu_step, arithmetic_trials_cuda,
# int4_kernel_trial_cuda and pairs_4bit_cuda); the log, the three notebooks,
# measured.json and leftover.txt are copied into OUT (six files: a device call brings back at most eight).
#   here:            bash benchmarks/gpu_peers.sh .peers
#   on the machine:  bash benchmarks/gpu_lease.sh OUT [BUDGET_SECONDS=560] [STEPS=tests,bandwidth,...: all ten, in order]
# With the device tool: run(command="bash benchmarks/gpu_lease.sh $OUT", carry=[".peers"], timeout_s=590).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: bash benchmarks/gpu_lease.sh OUT [BUDGET_SECONDS] [STEPS]}; BUDGET=${2:-560}
STEPS=${3:-tests,bandwidth,arith,hand,check,gpt2,train,memory,tuning,pairs}
export PYTHONPATH=$PWD/.peers:$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 MPLBACKEND=Agg
mkdir -p "$OUT" /tmp/gpu_lease
exec > >(tee -a "$OUT/lease.log") 2>&1
nvidia-smi -L; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"

# step NAME SECONDS COMMAND...: run COMMAND if SECONDS (its usual time on an H200) are left
step() {
  local name=$1 usual=$2 left=$((BUDGET - SECONDS)); shift 2
  if ((left < usual)); then echo "== $name: not run, $left s left of $BUDGET and it takes about $usual"; return 0; fi
  echo "== $name, at $SECONDS s: $*"
  timeout "$left" "$@"; echo "== $name: exit status $?, at $SECONDS s"
}
GPU_STEP=(python3 benchmarks/gpu_step.py --record --out /tmp/gpu_lease --rounds 10)
IFS=, read -ra ASKED <<< "$STEPS"
for name in "${ASKED[@]}"; do  # in the order asked
  case $name in
    tests)     step tests 200 python3 tools/store_cuda_outputs.py nbs/04e_compiled_call.ipynb nbs/04d_step_graph.ipynb ;;
    bandwidth) step bandwidth 90 "${GPU_STEP[@]}" --tables bandwidth ;;
    arith)     step arith 220 python3 benchmarks/arithmetic_trials.py --record ;;
    hand)      step hand 120 python3 benchmarks/int4_kernel_trial.py --time --record ;;
    memory)    step memory 120 python3 tools/store_cuda_outputs.py nbs/30_memory.ipynb ;;
    tuning)    step tuning 150 python3 benchmarks/kernel_tuning.py --record ;;
    gpt2)      step gpt2 260 "${GPU_STEP[@]}" --tables gpt2 ;;
    train)     step train 200 "${GPU_STEP[@]}" --tables train ;;
    check)     step check 240 "${GPU_STEP[@]}" --tables check ;;
    pairs)     step pairs 150 python3 benchmarks/pairs_4bit.py --device cuda --rounds 1 --steps 10 --shape 8192 8192 --tensors 8 --record ;;
    *)         echo "== $name: no such step (tests bandwidth arith hand memory tuning gpt2 train check pairs)" ;;
  esac
done
cp nbs/04e_compiled_call.ipynb nbs/04d_step_graph.ipynb nbs/30_memory.ipynb nbs/measured.json "$OUT/"
[ -f /tmp/gpu_lease/leftover.txt ] && cp /tmp/gpu_lease/leftover.txt "$OUT/"
echo "== done at $SECONDS s"
