"""Benchmark one optimizer step: optimi_nb's for-loop, foreach and compiled paths against torch.optim (for-loop, foreach,
fused) and optimi (optional: `pip install torch-optimi packaging`), in fp32 and in bf16 with Kahan summation.

Every configuration updates the same model-shaped tensors (12 blocks of 6 tensors, 12.6M parameters). All runs share one
process and are interleaved: each figure is the best, over several rounds, of the median of a round's steps. A plain copy
measured in the same process gives the memory bandwidth, and each result is set against its floor: the bytes the
algorithm must read and write per parameter, divided by that bandwidth. Usage:

    python tools/benchmark.py [--device cuda] [--optimizers AdamW SGD Lion] [--json nbs/benchmark_cpu.json]
"""
import argparse, json, statistics, time, warnings
import torch
from torch._dynamo.utils import counters
import optimi_nb

SHAPES = [(1024, 512), (1024,), (512, 1024), (512,), (512,), (512,)] * 12  # 12.6M parameters in 72 tensors


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


def configurations(name: str, dtype: torch.dtype) -> dict:
    "Constructors of every optimizer implementation to time for optimizer `name` and `dtype`"
    ours = getattr(optimi_nb, name)
    kw = dict(momentum=0.9) if name == "SGD" else {}
    configs = {"optimi_nb for-loop": lambda ps: ours(ps, lr=1e-3, foreach=False, **kw),
               "optimi_nb foreach": lambda ps: ours(ps, lr=1e-3, foreach=True, **kw),
               "optimi_nb compiled": lambda ps: ours(ps, lr=1e-3, compiled=True, **kw)}
    try:
        import optimi
        if hasattr(optimi, name):
            theirs = getattr(optimi, name)
            configs["optimi for-loop"] = lambda ps: theirs(ps, lr=1e-3, foreach=False, **kw)
            configs["optimi foreach"] = lambda ps: theirs(ps, lr=1e-3, foreach=True, **kw)
    except ImportError: pass
    if dtype == torch.float32 and hasattr(torch.optim, name):
        reference = getattr(torch.optim, name)
        args = dict(lr=1e-3, **kw) | (dict(betas=(0.9, 0.99), eps=1e-6) if name in ("Adam", "AdamW", "RAdam") else {})
        configs["torch for-loop"] = lambda ps: reference(ps, foreach=False, **args)
        configs["torch foreach"] = lambda ps: reference(ps, foreach=True, **args)
        if name in ("SGD", "Adam", "AdamW"): configs["torch fused"] = lambda ps: reference(ps, fused=True, **args)
    return configs


def time_steps(opt, device: str, steps: int) -> float:
    "Median seconds of `steps` optimizer steps"
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    times = []
    for _ in range(steps):
        sync(); t0 = time.perf_counter(); opt.step(); sync(); times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bandwidth(device: str, numel: int = sum(torch.Size(s).numel() for s in SHAPES)) -> float:
    "Bytes per second of a plain fp32 copy (a read and a write) of `numel` elements, best of several medians"
    src, dst = torch.randn(numel, device=device), torch.empty(numel, device=device)
    class Copy:
        def step(self): dst.copy_(src)
    return 8 * numel / min(time_steps(Copy(), device, 15) for _ in range(3))


def compile_facts(device: str) -> dict:
    "Seconds of the first compiled AdamW step, and graphs compiled over 100 steps of a cosine schedule after the first two"
    params = make_params(torch.float32, device)
    opt = optimi_nb.AdamW(params, lr=1e-3, compiled=True)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 100)
    t0 = time.perf_counter(); opt.step(); first = time.perf_counter() - t0
    sched.step(); opt.step(); sched.step()
    before = counters["stats"]["unique_graphs"]
    for _ in range(100): opt.step(); sched.step()
    return dict(first_step_seconds=first, graphs_compiled_during_schedule=counters["stats"]["unique_graphs"] - before)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--optimizers", nargs="*", default=["SGD", "AdamW", "Lion", "Adam", "RAdam", "Adan", "Ranger", "StableAdamW"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    n = sum(torch.Size(s).numel() for s in SHAPES)
    results = dict(device=args.device, params=n, tensors=len(SHAPES), compile=compile_facts(args.device), rows=[])
    results["copy_bandwidth"] = bandwidth(args.device)
    print(f"{n / 1e6:.1f}M parameters in {len(SHAPES)} tensors; copy bandwidth {results['copy_bandwidth'] / 1e9:.1f} GB/s; "
          f"first compiled step {results['compile']['first_step_seconds']:.1f} s; "
          f"graphs compiled during 100 cosine-schedule steps: {results['compile']['graphs_compiled_during_schedule']}")
    for name in args.optimizers:
        for label, dtype in (("fp32", torch.float32), ("bf16 + Kahan", torch.bfloat16)):
            configs = configurations(name, dtype)
            best = {}
            for _ in range(args.rounds):  # interleaved: every configuration once per round
                for impl, make in configs.items():
                    opt = make(make_params(dtype, args.device))
                    for _ in range(3): opt.step()  # warm-up: state, and compilation
                    best[impl] = min(best.get(impl, float("inf")), time_steps(opt, args.device, args.steps))
                    del opt
            floor = floor_bytes(name, dtype != torch.float32) * n / results["copy_bandwidth"]
            for impl, seconds in best.items():
                results["rows"].append(dict(optimizer=name, precision=label, implementation=impl, ms=seconds * 1e3,
                                            floor_ms=floor * 1e3, bytes_per_param=floor_bytes(name, dtype != torch.float32)))
                print(f"{name:<12}{label:<14}{impl:<20}{seconds * 1e3:>9.2f} ms   {floor / seconds:>5.0%} of the {floor * 1e3:.2f} ms floor")
    if args.json:
        with open(args.json, "w") as f: json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
