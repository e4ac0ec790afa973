"""Benchmark one optimizer step: optimi_nb's for-loop, foreach and compiled paths against torch.optim (for-loop, foreach,
fused) and optimi (optional: `pip install torch-optimi packaging`; on a GPU with Triton also its Triton kernels), in fp32
and in bf16 with Kahan summation.

Every configuration updates its own copy of the same model-shaped tensors (by default 12 blocks of 6 tensors, 12.6M
parameters; `--shapes gpt2` for GPT-2 small's 148 tensors, 124M parameters; `--shapes tiny` for a quick check). All
configurations of one optimizer and precision live in one process at once and are interleaved step by step: each round
times one step of every configuration, in a rotating order, and each figure is the median over the rounds. A plain fp32
copy of as many elements is timed in the same rounds and gives the memory bandwidth, so slow drifts of a shared machine
move the floor and the steps together. Each result is set against its floor: the bytes the algorithm must read and write
per parameter, divided by that bandwidth. On CUDA each step is timed with CUDA events on an idle stream (synchronised
before and after), so it includes the launch gaps of the step but not the host's synchronisation; `device` in the JSON
is then the GPU's name. Usage:

    python benchmarks/benchmark.py [--device cuda] [--shapes small|gpt2|tiny] [--optimizers AdamW SGD] [--json nbs/benchmark_cpu.json]
"""
import argparse, inspect, json, platform, statistics, time, warnings
import torch
from torch._dynamo.utils import counters
import optimi_nb

def gpt2_small() -> list[tuple[int, ...]]:
    "GPT-2 small's parameter shapes (124M parameters in 148 tensors): embeddings, 12 blocks of 12 tensors, final norm"
    d, block = 768, [(768,), (768,), (768, 3 * 768), (3 * 768,), (768, 768), (768,), (768,), (768,), (768, 4 * 768), (4 * 768,), (4 * 768, 768), (768,)]
    return [(50257, d), (1024, d)] + block * 12 + [(d,), (d,)]

SHAPE_SETS = {"small": [(1024, 512), (1024,), (512, 1024), (512,), (512,), (512,)] * 12,  # 12.6M parameters in 72 tensors
              "gpt2": gpt2_small(),
              "tiny": [(64, 32), (64,), (32, 64), (32,), (32,), (32,)] * 12}  # a quick check that everything runs
SHAPES = SHAPE_SETS["small"]


def floor_bytes(name: str, low_precision: bool) -> int:
    "Bytes per parameter an optimizer step must move at least: weights read and written, gradients read, state read and written"
    state = {"SGD": 1, "Adam": 2, "AdamW": 2, "RAdam": 2, "Lion": 1, "Adan": 4, "Ranger": 2, "StableAdamW": 2}[name]
    extra_reads = 2 if name == "StableAdamW" else 0  # its RMS needs a pass over g and v before the update
    if low_precision: return 2 * (2 + 1 + 2 * state + 2 + extra_reads)  # bf16 everything, plus the Kahan buffer read and written
    return 4 * (2 + 1 + 2 * state + extra_reads)


def make_params(dtype: torch.dtype, device: str) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    params = [torch.randn(s, generator=gen).to(device, dtype).requires_grad_() for s in SHAPES]
    for p in params: p.grad = torch.randn(p.shape, generator=gen).to(device, dtype) * 1e-2
    return params


def configurations(name: str, dtype: torch.dtype, device: str = "cpu") -> dict:
    "Constructors of every optimizer implementation to time for optimizer `name` and `dtype` on `device`"
    ours = getattr(optimi_nb, name)
    kw = dict(momentum=0.9) if name == "SGD" else {}
    configs = {"optimi_nb for-loop": lambda ps: ours(ps, lr=1e-3, foreach=False, **kw),
               "optimi_nb foreach": lambda ps: ours(ps, lr=1e-3, foreach=True, **kw),
               "optimi_nb compiled": lambda ps: ours(ps, lr=1e-3, compiled=True, **kw)}
    try:
        import optimi
        if hasattr(optimi, name):
            theirs = getattr(optimi, name)
            # optimi 0.3 defaults to its Triton kernels on a GPU: the for-loop and foreach rows turn them off explicitly
            no_triton = dict(triton=False) if "triton" in inspect.signature(theirs).parameters else {}
            configs["optimi for-loop"] = lambda ps: theirs(ps, lr=1e-3, foreach=False, **no_triton, **kw)
            configs["optimi foreach"] = lambda ps: theirs(ps, lr=1e-3, foreach=True, **no_triton, **kw)
            from optimi.utils import HAS_TRITON  # Triton installed and torch >= 2.6
            if no_triton and HAS_TRITON and device != "cpu":
                configs["optimi triton"] = lambda ps: theirs(ps, lr=1e-3, triton=True, **kw)
    except ImportError: pass
    if dtype == torch.float32 and hasattr(torch.optim, name):
        reference = getattr(torch.optim, name)
        args = dict(lr=1e-3, **kw) | (dict(betas=(0.9, 0.99), eps=1e-6) if name in ("Adam", "AdamW", "RAdam") else {})
        configs["torch for-loop"] = lambda ps: reference(ps, foreach=False, **args)
        configs["torch foreach"] = lambda ps: reference(ps, foreach=True, **args)
        if name in ("SGD", "Adam", "AdamW"): configs["torch fused"] = lambda ps: reference(ps, fused=True, **args)
    return configs


class Copy:
    "A plain fp32 copy of `numel` elements (8 bytes each, read and written), stepped like an optimizer"
    def __init__(self, numel: int, device: str):
        self.src, self.dst = torch.randn(numel, device=device), torch.empty(numel, device=device)
    def step(self): self.dst.copy_(self.src)


def timed(step, device: str) -> float:
    "Seconds of one call of `step`: wall clock on CPU; on CUDA, between two events around it on an otherwise idle stream"
    if not device.startswith("cuda"):
        t0 = time.perf_counter(); step(); return time.perf_counter() - t0
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize(); start.record(); step(); end.record(); end.synchronize()
    return start.elapsed_time(end) / 1e3


def interleaved_medians(steppers: dict, device: str, rounds: int) -> dict:
    "Median seconds of one step of each stepper, over `rounds` rounds that step every stepper once, in a rotating order"
    names, times = list(steppers), {name: [] for name in steppers}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]: times[name].append(timed(steppers[name].step, device))
    return {name: statistics.median(ts) for name, ts in times.items()}


def compile_facts(device: str) -> dict:
    "Seconds of the first compiled AdamW step, and graphs compiled over 100 steps of a cosine schedule after the first two"
    params = make_params(torch.float32, device)
    opt = optimi_nb.AdamW(params, lr=1e-3, compiled=True)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 100)
    first = timed(opt.step, device)
    sched.step(); opt.step(); sched.step()
    before = counters["stats"]["unique_graphs"]
    for _ in range(100): opt.step(); sched.step()
    return dict(first_step_seconds=first, graphs_compiled_during_schedule=counters["stats"]["unique_graphs"] - before)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--shapes", default="small", choices=SHAPE_SETS, help="the parameter tensors: small (12.6M), gpt2 (124M), tiny")
    parser.add_argument("--optimizers", nargs="*", default=["SGD", "AdamW", "Lion", "Adam", "RAdam", "Adan", "Ranger", "StableAdamW"])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if args.device.startswith("cuda") and not torch.cuda.is_available(): parser.error(f"--device {args.device}: no CUDA GPU visible to torch {torch.__version__}")
    global SHAPES
    SHAPES = SHAPE_SETS[args.shapes]
    n = sum(torch.Size(s).numel() for s in SHAPES)
    device_name = torch.cuda.get_device_name(torch.device(args.device)) if args.device.startswith("cuda") else args.device
    print(f"{device_name}, torch {torch.__version__}, Python {platform.python_version()}")
    results = dict(device=device_name, params=n, tensors=len(SHAPES), compile=compile_facts(args.device), rows=[], bandwidths=[])
    print(f"{n / 1e6:.1f}M parameters in {len(SHAPES)} tensors; first compiled step {results['compile']['first_step_seconds']:.1f} s; "
          f"graphs compiled during 100 cosine-schedule steps: {results['compile']['graphs_compiled_during_schedule']}")
    for name in args.optimizers:
        for label, dtype in (("fp32", torch.float32), ("bf16 + Kahan", torch.bfloat16)):
            steppers = {}
            for impl, make in configurations(name, dtype, args.device).items():
                try:
                    opt = make(make_params(dtype, args.device))
                    for _ in range(3): opt.step()  # warm-up: state, and compilation
                    steppers[impl] = opt
                except Exception as e: print(f"  {impl}: skipped, {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            steppers["copy"] = Copy(n, args.device)
            seconds = interleaved_medians(steppers, args.device, args.rounds)
            bandwidth = 8 * n / seconds.pop("copy")
            results["bandwidths"].append(bandwidth)
            floor = floor_bytes(name, dtype != torch.float32) * n / bandwidth
            print(f"{name} {label}: copy bandwidth {bandwidth / 1e9:.1f} GB/s")
            for impl, s in seconds.items():
                results["rows"].append(dict(optimizer=name, precision=label, implementation=impl, ms=s * 1e3,
                                            floor_ms=floor * 1e3, bytes_per_param=floor_bytes(name, dtype != torch.float32),
                                            copy_bandwidth=bandwidth))
                print(f"  {impl:<20}{s * 1e3:>9.2f} ms   {floor / s:>5.0%} of the {floor * 1e3:.2f} ms floor")
            del steppers
    results["copy_bandwidth"] = statistics.median(results["bandwidths"])
    results |= dict(shapes=args.shapes, torch=torch.__version__)
    if args.json:
        with open(args.json, "w") as f: json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
