"""The host's work per optimizer step, on tensors so small that kernels cost little: issue #40's CPU proxies.

GPT-2 small's 148 parameter shapes (benchmarks/benchmark.py), each side divided by 96, so that every tensor holds a
few dozen to a few thousand elements and a step's time is mostly the host's: Python, dispatch, dynamo's guards,
launches. Rows, all in one process, interleaved in a rotating order, medians over the rounds:

- one AdamW step of every tensor: torch's fused AdamW (fp32, and bf16 without Kahan) against optimi_nb's compiled step
  (fp32, bf16 + Kahan, and bf16 with int8 states and the int8 residual: the tensors quantized that are in the full-size
  model, its 50 matrices, while its 98 biases and norms keep bf16 states with the int8 residual);
- one gradient release hook per tensor: PyTorch's recipe (a fused AdamW per parameter, stepped and zeroed in the hook)
  against optimi_nb's hook (compiled, fp32, bf16 + Kahan, and int8 + residual), per hook.

    python3 benchmarks/host_overhead.py [--device cuda] [--rounds 200] [--threads 1] [--processes 3] [--record]

Rows that share one process can read up to 0.1 of torch fused's time apart from the same row timed alone (code layout,
caches, the allocator's state move with what else the process has run); `--processes N` times each row alone in a
process of its own, N times in a rotating order, and gives the median over processes.

On a CPU a compiled kernel runs while the host waits, and 8-bit states pad each shrunk tensor to whole blocks of 256, so
the kernels do not cost nothing there: each step row also gives the time spent inside Inductor's C++ kernels (timed by
wrapping them, about 0.3 µs a call), and the rest is the host's own work.

`--record` stores the figures in nbs/measured.json, section `host_overhead` (`host_overhead_cuda` on a GPU). On a GPU each
figure is the host's time until the call returns (no synchronisation), which is what the GPU waits for once kernels are fast.
"""
import argparse, json, math, statistics, subprocess, time, warnings
from pathlib import Path
import sys
import torch
sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parent.parent)]  # optimi_nb from this checkout if not installed
import optimi_nb, optimi_nb.storage
from optimi_nb.gradient_release import start_release, stepping_while_alive
from benchmark import gpt2_small

ROOT = Path(__file__).resolve().parent.parent
INT8 = dict(state_precision="int8", kahan_precision="int8")


def tiny_gpt2(dtype: torch.dtype, device: str) -> list[torch.nn.Parameter]:
    "GPT-2 small's 148 tensors, each side divided by 96 (at least 1), with fixed random weights and gradients"
    gen = torch.Generator().manual_seed(0)
    params = []
    for shape in gpt2_small():
        p = torch.nn.Parameter(torch.randn(*[max(1, s // 96) for s in shape], generator=gen).to(device, dtype))
        p.grad = torch.randn(p.shape, generator=gen).to(device, dtype) * 1e-2
        params.append(p)
    return params


def quantized_as_full_size() -> int:
    """The `MIN_QUANTIZED_NUMEL` under which the shrunk tensors keep 8-bit states where GPT-2 small's full-size tensors
    do: all its matrices, none of its biases and norms (which have fewer than `MIN_QUANTIZED_NUMEL` elements)"""
    full = lambda shape: math.prod(shape)
    shrunk = lambda shape: math.prod(max(1, s // 96) for s in shape)
    quantized = [shrunk(s) for s in gpt2_small() if full(s) >= optimi_nb.storage.MIN_QUANTIZED_NUMEL]
    plain = [shrunk(s) for s in gpt2_small() if full(s) < optimi_nb.storage.MIN_QUANTIZED_NUMEL]
    assert max(plain) < min(quantized), "no threshold on the shrunk sizes quantizes what the full-size model does"
    return min(quantized)


class WholeStep:
    "One optimizer step of every tensor, the gradients left in place"
    def __init__(self, make, dtype, device): self.params = tiny_gpt2(dtype, device); self.opt = make(self.params)
    def run(self): self.opt.step()


class ReleaseHooks:
    "One gradient release hook per tensor, as backward would call them: `hook(p)` steps `p` and frees its gradient"
    def __init__(self, hooks_for, dtype, device):
        self.params = tiny_gpt2(dtype, device)
        self.grads = [p.grad for p in self.params]
        self.hook, self.owner = hooks_for(self.params)  # the owner: what the hook steps, kept alive here
    def run(self):
        for p, g in zip(self.params, self.grads): p.grad = g; self.hook(p)


def recipe_hooks(params):
    "PyTorch's recipe (the tutorial on fusing the optimizer step into backward): a fused AdamW per parameter"
    opts = {p: torch.optim.AdamW([p], lr=1e-3, fused=True) for p in params}
    def hook(p): opts[p].step(); opts[p].zero_grad()
    return hook, opts


def ours_hooks(**options):
    "optimi_nb's hook: the optimizer's step and zero_grad for one parameter (what prepare_for_gradient_release registers)"
    def hooks_for(params):
        opt = optimi_nb.AdamW(params, lr=1e-3, gradient_release=True, compiled=True, **options)
        start_release(opt, params, None)
        return stepping_while_alive(opt), opt  # the hook holds the optimizer weakly
    return hooks_for


def rows(device: str) -> dict:
    "Each row's runner: whole steps, then release hooks"
    bf16, fp32 = torch.bfloat16, torch.float32
    fused = lambda params: torch.optim.AdamW(params, lr=1e-3, fused=True)
    ours = lambda **o: lambda params: optimi_nb.AdamW(params, lr=1e-3, compiled=True, **o)
    steps = {"torch fused, fp32": WholeStep(fused, fp32, device), "optimi_nb compiled, fp32": WholeStep(ours(), fp32, device),
             "torch fused, bf16 (no Kahan)": WholeStep(fused, bf16, device),
             "optimi_nb compiled, bf16 + Kahan": WholeStep(ours(), bf16, device),
             "optimi_nb compiled, int8 states + int8 residual": WholeStep(ours(**INT8), bf16, device)}
    hooks = {"PyTorch's recipe hook, fp32": ReleaseHooks(recipe_hooks, fp32, device),
             "optimi_nb hook, compiled, fp32": ReleaseHooks(ours_hooks(), fp32, device),
             "optimi_nb hook, compiled, bf16 + Kahan": ReleaseHooks(ours_hooks(), bf16, device),
             "optimi_nb hook, compiled, int8 + residual": ReleaseHooks(ours_hooks(**INT8), bf16, device)}
    return steps, hooks


KERNEL_SECONDS = [0.0]  # seconds spent inside Inductor's compiled CPU kernels since last reset


def time_compiled_kernels() -> int:
    """Wrap every C++ kernel of the Inductor modules loaded so far with a timer adding to KERNEL_SECONDS; how many.
    On a CPU the kernels run while the host waits, so this is the part of a step that is not the host's own work"""
    from torch._inductor.codecache import PyCodeCache
    modules = PyCodeCache.modules.values() if isinstance(PyCodeCache.modules, dict) else PyCodeCache.modules
    def timed(kernel):
        def run(*args):
            start = time.perf_counter(); kernel(*args); KERNEL_SECONDS[0] += time.perf_counter() - start
        run.timed = True
        return run
    wrapped = 0
    for module in modules:
        for name, kernel in vars(module).items():
            if name.startswith("cpp_fused") and not getattr(kernel, "timed", False):
                setattr(module, name, timed(kernel)); wrapped += 1
    return wrapped


def medians(runners: dict, rounds: int) -> tuple[dict, dict]:
    """Median wall seconds of each runner's `run()`, over `rounds` rounds in a rotating order, after a warm-up; and the
    median seconds of each run spent in compiled CPU kernels"""
    for r in runners.values():
        for _ in range(3): r.run()
    time_compiled_kernels()
    names, times, kernels = list(runners), {name: [] for name in runners}, {name: [] for name in runners}
    for i in range(rounds):
        for name in names[i % len(names):] + names[:i % len(names)]:
            KERNEL_SECONDS[0], start = 0.0, time.perf_counter()
            runners[name].run()
            times[name].append(time.perf_counter() - start); kernels[name].append(KERNEL_SECONDS[0])
    return ({name: statistics.median(t) for name, t in times.items()},
            {name: statistics.median(t) for name, t in kernels.items()})


def in_this_process(device: str, rounds: int, only: str | None = None) -> tuple[dict, dict, dict]:
    """Median seconds of each step row, of its compiled kernels, and of each hook row, all timed in this process
    (`only`: that row alone)"""
    steps, hooks = rows(device)
    if only is not None: steps, hooks = ({k: v for k, v in d.items() if k == only} for d in (steps, hooks))
    step_s, kernel_s = medians(steps, rounds) if steps else ({}, {})
    return step_s, kernel_s, medians(hooks, rounds)[0] if hooks else {}


def in_processes(args) -> tuple[dict, dict, dict]:
    """As `in_this_process`, each row timed alone in a process of its own, `args.processes` times in a rotating order:
    the median over processes. Rows that share a process can read 0.1 of torch fused's time apart from their
    alone timing (code layout, caches, the allocator's state); a row alone is read to a few hundredths"""
    step_names, hook_names = (list(d) for d in rows(args.device))  # made, not run: no compiling here
    names = step_names + hook_names
    found = {name: [] for name in names}
    for i in range(args.processes):
        for name in names[i % len(names):] + names[:i % len(names)]:
            command = [sys.executable, __file__, "--only", name, "--rounds", str(args.rounds), "--threads",
                       str(args.threads), "--device", args.device]
            found[name].append(json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout))
    median = lambda name, key: statistics.median(f[key] for f in found[name])
    return ({n: median(n, "seconds") for n in step_names}, {n: median(n, "kernel_seconds") for n in step_names},
            {n: median(n, "seconds") for n in hook_names})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--processes", type=int, default=0,
                        help="time each row alone in a process of its own, this many times (0: every row in this one)")
    parser.add_argument("--only", help=argparse.SUPPRESS)  # one row, its medians printed as JSON (--processes' worker)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    # the 8-bit rows quantize the shrunk tensors whose full-size tensors are quantized, and only those
    optimi_nb.storage.MIN_QUANTIZED_NUMEL = quantized_as_full_size()
    warnings.filterwarnings("ignore", message=".*gradient release.*")
    if args.only is not None:
        step_s, kernel_s, hook_s = in_this_process(args.device, args.rounds, args.only)
        seconds = {**step_s, **hook_s}[args.only]
        return print(json.dumps(dict(seconds=seconds, kernel_seconds=kernel_s.get(args.only, 0.0))))
    step_s, step_kernel_s, hook_s = in_processes(args) if args.processes else in_this_process(args.device, args.rounds)
    step_ms, kernel_ms = {k: v * 1e3 for k, v in step_s.items()}, {k: v * 1e3 for k, v in step_kernel_s.items()}
    hook_us = {k: v * 1e6 / len(gpt2_small()) for k, v in hook_s.items()}
    base = {"fp32": step_ms["torch fused, fp32"], "bf16": step_ms["torch fused, bf16 (no Kahan)"]}
    where = f"{args.processes} processes a row" if args.processes else "one process"
    print(f"host time per step, {len(gpt2_small())} tensors, {args.device}, {args.threads} thread(s), "
          f"{args.rounds} rounds, {where}")
    for name, ms in step_ms.items():
        ref = base["fp32"] if "fp32" in name else base["bf16"]
        kernels = f", {kernel_ms[name]:.3f} ms of it in compiled kernels" if kernel_ms[name] else ""
        print(f"  {name:52s} {ms:7.3f} ms  {ms / ref:5.2f}× torch fused ({'fp32' if 'fp32' in name else 'bf16'}){kernels}")
    print("host time per release hook")
    recipe = hook_us["PyTorch's recipe hook, fp32"]
    for name, us in hook_us.items(): print(f"  {name:52s} {us:7.1f} µs  {us / recipe:5.2f}× the recipe's")
    if args.record:
        path = ROOT / "nbs" / "measured.json"
        measured = json.loads(path.read_text())
        key = "host_overhead" if args.device == "cpu" else "host_overhead_cuda"
        measured[key] = dict(command=f"python3 benchmarks/host_overhead.py --rounds {args.rounds} --threads {args.threads}"
                             + (f" --device {args.device}" if args.device != "cpu" else "")
                             + (f" --processes {args.processes}" if args.processes else ""),
                             torch=torch.__version__, threads=args.threads, step_ms=step_ms, hook_us=hook_us,
                             **({"step_kernel_ms": kernel_ms} if args.device == "cpu" else {}))
        path.write_text(json.dumps(measured, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
