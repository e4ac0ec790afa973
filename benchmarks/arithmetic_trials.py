"""The compiled int8 and int4 AdamW steps on a GPU with cheaper arithmetic, tried before it is written into the library.

The coded steps are bound by the instructions their kernels issue, not by their bytes (the Speed chapter, *Bound by
instructions*; `tools/triton_check.py --instructions` counts them on a CPU). Two exact changes that count fewer:
- `reciprocal`: the residual's encoder multiplies the compensation by its weight's reciprocal spacing, built from the
  exponent bits (a power of two, exact), where it divides by the spacing (161 -> 155 sm_90 instructions per parameter);
- `table`: the 8-bit decoders read each code's value from a table of the 256 (computed once with the same fp32
  division), where they divide (161 -> 149): a load from the L1 cache for two divisions, which only a GPU can time;
- `both` (161 -> 144: a bound of 0.68 of the floor, where 161 bounds it at 0.61).
The 4-bit step takes two kernels, the second computing the update again to encode the states (243 instructions per
parameter: a bound of 0.34). `int4-realized` has Inductor store each value read by two kernels (its
`realize_reads_threshold` at 1): the updated moments, in bf16, go through memory between a kernel for the weights
and one per state's encoder (210 instructions, and 8 bytes per parameter more: bounds of 0.39 by instructions, 0.55 by
bytes); `int4` is its baseline.
Each trial runs in a process of its own, as `benchmarks/kernel_tuning.py` measures a setting (its `measure`: 8 bf16
matrices of 8192², the states in 8 or 4 bits and the int8 residual, launch settings tuned, steps not recorded as CUDA
graphs, timed beside an fp32 copy for the floor), every update through torch.compile (a table is a tensor the direct
calls' tracing refuses). `--record` stores the figures in nbs/measured.json, section `arithmetic_trials_cuda`. GPU only.

    python3 benchmarks/arithmetic_trials.py [--rounds 15] [--trials baseline reciprocal ... int4-realized] [--record]
    python3 benchmarks/arithmetic_trials.py --check   # on a CPU: each trial computes what the library does, bit for bit
    python3 benchmarks/arithmetic_trials.py --count TRIAL   # on a CPU: its kernels' sm_90 instructions per parameter
"""
import argparse, datetime, json, subprocess, sys
from pathlib import Path
import torch

ROOT = Path(__file__).resolve().parent.parent
TRIALS = {"baseline": "int8", "reciprocal": "int8", "table": "int8", "both": "int8", "int4": "int4",
          "int4-realized": "int4"}  # each trial's storage

def reciprocal_residual() -> None:
    "The int8 residual encoded by a product with the weight's reciprocal spacing (bf16 weights), not by a division"
    import optimi_nb.codecs as codecs
    def encode_residual(comp, param):
        exponent = param.float().view(torch.int32).bitwise_and(0x7F800000).clamp(2**23, 254 * 2**23)
        reciprocal = (255 * 2**23 - exponent).view(torch.float32)  # 2^-6 / ULP(θ), a normal float for every finite θ
        scaled = comp.to(torch.float32, copy=True).mul_(reciprocal).mul_(254 * 64)  # 254·k/ULP(θ), exactly as divided
        return scaled.round_().clamp_(-127, 127).to(torch.int8)
    import optimi_nb.storage as storage
    codecs.encode_residual = storage.encode_residual = encode_residual  # where it is defined, and where it is called

def table_decoders(device: str) -> None:
    "The 8-bit decoders reading each code's value from a table on `device`, made here, before anything is traced"
    import optimi_nb.codecs as codecs
    q = torch.arange(-128, 128, dtype=torch.float32, device=device)
    signed, nonnegative = q / (254 - q.abs()), (q + 128) / (510 - (q + 128))  # the decoders' own divisions, once
    plain_signed, plain_nonnegative = codecs.decode_signed, codecs.decode_nonnegative
    def decode_signed(codes, scales, like, levels=127, block_size=codecs.BLOCK_SIZE):
        if levels != 127: return plain_signed(codes, scales, like, levels, block_size)
        return codecs.from_blocks(signed[codes.view(-1, block_size).long() + 128] * scales[:, None], like)
    def decode_nonnegative(codes, scales, like, levels=255, block_size=codecs.BLOCK_SIZE):
        if levels != 255: return plain_nonnegative(codes, scales, like, levels, block_size)
        return codecs.from_blocks((nonnegative[codes.view(-1, block_size).long()] * scales[:, None]).square_(), like)
    codecs.decode_signed, codecs.decode_nonnegative = decode_signed, decode_nonnegative

def realized_values() -> None:
    "Inductor stores a value that two kernels read, where it would compute it again in each (4-bit states' moments)"
    import torch._inductor.config
    torch._inductor.config.realize_reads_threshold = 1

def apply(trial: str, device: str) -> None:
    "Make the compiled updates traced from here on use `trial`'s arithmetic"
    if trial in ("reciprocal", "both"): reciprocal_residual()
    if trial in ("table", "both"): table_decoders(device)
    if trial == "int4-realized": realized_values()

def check() -> None:
    "On the CPU: each trial's codes and values equal the library's, on weights, compensations and codes of every kind"
    import optimi_nb.codecs as codecs
    import optimi_nb.storage as storage
    encode, signed, nonnegative = codecs.encode_residual, codecs.decode_signed, codecs.decode_nonnegative
    reciprocal_residual(); table_decoders("cpu")
    assert storage.encode_residual is codecs.encode_residual is not encode, "the step would not use the trial's encoder"
    gen = torch.Generator().manual_seed(0)
    param = (torch.randn(1 << 16, generator=gen) * torch.randn(1 << 16, generator=gen).exp2_().pow(8)).bfloat16()
    param[:64] = 0; param[64:128] = 1e-39  # zeros and subnormal weights
    comp = ((torch.rand(1 << 16, generator=gen) - 0.5) * codecs.ulp(param) * 1.2).bfloat16()  # beyond ±ULP/2 too
    assert torch.equal(codecs.encode_residual(comp, param), encode(comp, param)), "the reciprocal residual differs"
    codes, scales = torch.randint(-127, 128, (1 << 16,), dtype=torch.int8, generator=gen), torch.rand(256) + 0.1
    like = torch.empty(1 << 16, dtype=torch.bfloat16)
    assert torch.equal(codecs.decode_signed(codes, scales, like), signed(codes, scales, like)), "signed table differs"
    codes = codes.view(torch.uint8)
    decoded = codecs.decode_nonnegative(codes, scales, like)
    assert torch.equal(decoded, nonnegative(codes, scales, like)), "the non-negative table differs"
    print("arithmetic_trials: the trials' codes and values equal the library's")

def count(trial: str) -> int:
    "On the CPU: `tools/triton_check.py --instructions` for AdamW on a 64 × 64 matrix, with `trial`'s arithmetic"
    sys.argv = ["triton_check.py", "--optimizers", "AdamW", "--precisions", f"bf16+{TRIALS[trial]}", "--targets", "90",
                "--whole-blocks", "--instructions"]
    sys.path.insert(0, str(ROOT / "tools"))
    import triton_check  # first: it tells triton to interpret before anything imports it
    apply(trial, "cpu")
    return triton_check.main()

def run_trial(trial: str, rounds: int) -> dict:
    "`kernel_tuning.measure` of `trial`'s step, tuned, in this process with its arithmetic"
    sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
    import kernel_tuning, optimi_nb.compiled_call as calls
    calls.CompiledCalls.direct_calls = False
    apply(trial, "cuda")
    return kernel_tuning.measure(TRIALS[trial], "tuned", rounds)

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--trials", nargs="*", choices=TRIALS, default=list(TRIALS))
    parser.add_argument("--record", action="store_true", help="store the figures in measured.json")
    parser.add_argument("--check", action="store_true", help="on the CPU: the trials compute what the library does")
    parser.add_argument("--count", choices=TRIALS, help="on the CPU: the trial's sm_90 instructions per parameter")
    parser.add_argument("--run", help=argparse.SUPPRESS)  # one process's trial
    args = parser.parse_args()
    if args.check: sys.path.insert(0, str(ROOT)); check(); return
    if args.count: sys.exit(count(args.count))
    if not torch.cuda.is_available():
        sys.exit(f"arithmetic_trials: torch {torch.__version__} sees no CUDA GPU; none run")
    if args.run: print(json.dumps(run_trial(args.run, args.rounds))); return
    rows = {}
    for trial in args.trials:
        run = subprocess.run([sys.executable, __file__, "--run", trial, "--rounds", str(args.rounds)],
                             capture_output=True, text=True)
        print(run.stderr[-2000:], file=sys.stderr)
        why = (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1][:200]
        rows[trial] = json.loads(run.stdout.strip().splitlines()[-1]) if run.returncode == 0 else dict(error=why)
        print(f"{TRIALS[trial]} states + int8 residual ·", trial, rows[trial], flush=True)
    if args.record:
        path = ROOT / "nbs" / "measured.json"
        measured = json.loads(path.read_text())
        measured["arithmetic_trials_cuda"] = dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                                                  command="python3 " + " ".join(sys.argv),
                                                  date=datetime.date.today().isoformat(), rows=rows)
        path.write_text(json.dumps(measured, indent=1, ensure_ascii=False) + "\n")

if __name__ == "__main__": main()
