"""Chapter 35's speed table: one AdamW step with 8- and 4-bit states against bf16 + Kahan summation, on
benchmarks/benchmark.py's 12.6M bf16 parameters in 72 tensors, every variant in one process, interleaved (benchmark.py's method).

    python3 benchmarks/speed_8bit.py [--device cuda] [--rounds 20] [--record] [--profile [--shapes tiny]] [--views] [--combo]

On a CPU each step runs on one thread (chapter 35's setting). On CUDA it also counts the kernels that one compiled step
launches, on the 72 tensors and on one 2048 × 2048 matrix (one compiled chunk), with torch.profiler, and the fp32 buffers
of a state's size that Inductor's wrapper code allocates between them. `--record` stores the figures in
nbs/measured.json: section `speed_8bit` on a CPU, `speed_8bit_cuda` on a GPU (with the GPU's name). `--profile` prints, for
each compiled row, the host's time per step (without waiting for the GPU) and the Python functions that take it (cProfile),
on benchmark.py's parameters or (`--shapes tiny`) 72 small tensors, whose step is nearly all host work. `--views` times the
compiled 8-bit step with its step plan (buckets, stored values and views) reused between steps (as it runs) against made
anew in each call, beside the compiled bf16 + Kahan step: host time per step, kernels per step, and interleaved step times.
`--combo` times compiled SGD (fp32, beside torch's fused SGD) and compiled AdamW (bf16 + Kahan, and int8) as compiled on a
GPU, with Inductor's combo kernels, and without them; `--record` then stores section `combo_kernels_cuda`."""
import argparse, cProfile, collections, datetime, functools, io, logging, pstats, re, shlex, statistics, sys, time, warnings
from pathlib import Path
import torch

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parent.parent)]
import benchmark
from benchmark import SHAPE_SETS, interleaved_medians, make_params
from optimi_nb import AdamW

INT8 = dict(state_precision="int8", kahan_precision="int8")
INT4 = dict(state_precision="int4", kahan_precision="int8")
BASELINE = "bf16 + Kahan, compiled"


def torchao_adamw8bit(params, lr: float):
    "torchao's AdamW8bit with our AdamW's defaults, or None where torchao is not installed"
    for name in ("torchao", "torch.utils._pytree"): logging.getLogger(name).setLevel(logging.ERROR)
    try: from torchao.optim import AdamW8bit
    except ImportError: return None
    return AdamW8bit(params, lr=lr, betas=(0.9, 0.99), eps=1e-6, weight_decay=1e-2)


def bitsandbytes_adamw8bit(params, lr: float):
    "bitsandbytes' AdamW8bit with our AdamW's defaults, or None where bitsandbytes is not installed"
    logging.getLogger("bitsandbytes").setLevel(logging.ERROR)  # its import reports GPU kernels it cannot load on a CPU
    try: from bitsandbytes.optim import AdamW8bit
    except ImportError: return None
    return AdamW8bit(params, lr=lr, betas=(0.9, 0.99), eps=1e-6, weight_decay=1e-2)


def adamw_8bit_steppers(device: str) -> dict:
    "Chapter 35's table rows: name -> an AdamW-like optimizer on its own copy of the 12.6M bf16 parameters (rows whose package is missing left out); the compiled 8-bit step also with one of its two 8-bit options, to split its cost"
    params = lambda: make_params(torch.bfloat16, device)
    kernel = "CPU kernel" if device == "cpu" else "CUDA kernel"
    steppers = {BASELINE: AdamW(params(), lr=1e-3, compiled=True),
                "int8 states + int8 residual, compiled": AdamW(params(), lr=1e-3, compiled=True, **INT8),
                "int8 states + bf16 compensation, compiled": AdamW(params(), lr=1e-3, compiled=True, state_precision="int8"),
                "bf16 states + int8 residual, compiled": AdamW(params(), lr=1e-3, compiled=True, kahan_precision="int8"),
                "int4 states + int8 residual, compiled": AdamW(params(), lr=1e-3, compiled=True, **INT4),
                "bf16 + Kahan, foreach": AdamW(params(), lr=1e-3, foreach=True),
                "int8 states + int8 residual, foreach": AdamW(params(), lr=1e-3, foreach=True, compiled=False, **INT8),
                "int8 states + int8 residual, for-loop": AdamW(params(), lr=1e-3, foreach=False, compiled=False, **INT8),
                "int4 states + int8 residual, foreach": AdamW(params(), lr=1e-3, foreach=True, compiled=False, **INT4),
                "torchao AdamW8bit, bf16 weights without compensation": torchao_adamw8bit(params(), lr=1e-3),
                f"bitsandbytes AdamW8bit ({kernel}), bf16 weights without compensation": bitsandbytes_adamw8bit(params(), lr=1e-3)}
    return {name: opt for name, opt in steppers.items() if opt is not None}


def measure(device: str = "cpu", rounds: int = 20) -> dict:
    "Median ms of one step of each row and its ratio to the compiled bf16 + Kahan step (one thread on a CPU)"
    warnings.filterwarnings("ignore")
    threads = torch.get_num_threads()
    if device == "cpu": torch.set_num_threads(1)  # waiting for a descheduled OpenMP thread would dominate on a shared machine
    try:
        steppers = adamw_8bit_steppers(device)
        for opt in steppers.values():
            for _ in range(3): opt.step()  # state, and compilation
        seconds = interleaved_medians(steppers, device, rounds=rounds)
    finally: torch.set_num_threads(threads)
    return {name: {"ms": s * 1e3, "ratio": s / seconds[BASELINE]} for name, s in seconds.items()}


def kernels_per_step(opt) -> collections.Counter:
    "The CUDA kernels (by name) that one step of `opt` launches, counted by torch.profiler"
    opt.step(); torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        opt.step(); torch.cuda.synchronize()
    name = lambda kernel: "fill of a 0-dim tensor (ATen)" if "FillFunctor" in kernel else kernel  # lr and the step's scalars
    return collections.Counter(name(e.name) for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


FP32_BUFFER = re.compile(r"empty_strided_\w+\(\(([^()]*)\), \([^()]*\), torch\.float32\)")

def fp32_buffers(opt, numel: int) -> int:
    "fp32 buffers of at least `numel` // 2 elements that the wrapper code of `opt`'s first compiled step allocates"
    from torch._inductor.utils import run_and_get_code
    torch._dynamo.reset()
    _, sources = run_and_get_code(opt.step)
    sizes = [torch.Size(map(int, re.findall(r"\d+", m.group(1)))).numel() for src in sources for m in FP32_BUFFER.finditer(src)]
    return sum(1 for size in sizes if size >= numel // 2)


def kernel_facts() -> dict:
    "Kernels per compiled step (72 tensors; one 2048 × 2048 chunk) and fp32 state-sized buffers, for each compiled storage"
    facts = {}
    for name, options in {"bf16 + Kahan": {}, "int8 states + int8 residual": INT8, "int4 states + int8 residual": INT4}.items():
        row = {}
        opt = AdamW(make_params(torch.bfloat16, "cuda"), lr=1e-3, compiled=True, **options)
        opt.step(); row["kernels, 72 tensors"] = sum(kernels_per_step(opt).values())
        matrix = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        matrix.grad = torch.randn_like(matrix) * 1e-2
        one = AdamW([matrix], lr=1e-3, compiled=True, **options)
        row["fp32 state-sized buffers, one chunk"] = fp32_buffers(one, matrix.numel())
        kernels = kernels_per_step(one)
        row["kernels, one chunk"] = sum(kernels.values())
        row["kernel names, one chunk"] = dict(kernels)
        facts[name] = row
    return facts


def host_ms(opt, steps: int = 50) -> float:
    "The host's median time per step of `opt` in ms, not waiting for a GPU"
    times = []
    for _ in range(steps):
        start = time.perf_counter(); opt.step(); times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def host_profile(opt, steps: int = 50) -> str:
    "The host's median time per step of `opt` (not waiting for a GPU), and cProfile's top functions by own time over `steps` steps"
    ms = host_ms(opt, steps)
    profiler = cProfile.Profile()
    profiler.runcall(lambda: [opt.step() for _ in range(steps)])
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
    return f"host time per step: {ms:.3f} ms (median of {steps})\n" + out.getvalue()


class Unplanned:
    "An optimizer whose step plan (its buckets, stored values and views) is made anew at every step"
    def __init__(self, opt): self.opt = opt
    def step(self): self.opt._plans.clear(); self.opt.step()


def compare_views(device: str, rounds: int) -> None:
    "The compiled 8-bit step with its step plan and views reused, and made in each call, beside compiled bf16 + Kahan"
    warnings.filterwarnings("ignore")
    params = lambda: make_params(torch.bfloat16, device)
    steppers = {BASELINE: AdamW(params(), lr=1e-3, compiled=True),
                "int8, compiled, plan made in each call": Unplanned(AdamW(params(), lr=1e-3, compiled=True, **INT8)),
                "int8, compiled, plan reused": AdamW(params(), lr=1e-3, compiled=True, **INT8)}
    for opt in steppers.values():
        for _ in range(3): opt.step()
    for name, opt in steppers.items():
        kernels = sum(kernels_per_step(opt).values()) if device.startswith("cuda") else "-"
        print(f"{name:40}  kernels per step {kernels}  host time per step {host_ms(opt, rounds):.3f} ms")
    seconds = interleaved_medians(steppers, device, rounds=rounds)
    for name, s in seconds.items(): print(f"{name:40}  {s * 1e3:8.3f} ms  {s / seconds[BASELINE]:5.2f}×")


def through_torch_compile(opt):
    "`opt` with every compiled update through torch.compile and no step recorded as a CUDA graph: the path combo kernels change"
    opt.direct_calls, opt.capture_steps = False, False
    return opt


class WithoutComboKernels:
    "An optimizer whose compiled steps go through torch.compile as the library compiles them, but without Inductor's combo kernels"
    compiled = {}  # by (device type, coded states)
    def __init__(self, opt): self.opt = through_torch_compile(opt)

    @staticmethod
    def compiled_update_core(device_type: str, codes: bool = False):
        "`compiled_update_core` with the library's options for `device_type` and `codes`, less combo kernels"
        import optimi_nb.update as update
        if (device_type, codes) not in WithoutComboKernels.compiled:  # a copy of the function: dynamo caches graphs on its code
            core, options = update.compiled_form(device_type, codes)
            f = update.update_core_on_copy
            copy = type(f)(f.__code__.replace(co_name=f"update_core_on_copy_without_combo_{device_type}_{codes}"),
                           f.__globals__, f.__name__)
            copy = functools.partial(copy, **core.keywords) if isinstance(core, functools.partial) else copy
            WithoutComboKernels.compiled[device_type, codes] = torch.compile(copy, dynamic=False,
                                                                             options=options | {"combo_kernels": False})
        return WithoutComboKernels.compiled[device_type, codes]

    def step(self):
        import optimi_nb.compiled_call as calls
        real, calls.compiled_update_core = calls.compiled_update_core, WithoutComboKernels.compiled_update_core
        try: self.opt.step()
        finally: calls.compiled_update_core = real


def dated() -> dict:
    "The command that ran and today's date, stored beside a GPU run's figures"
    return {"command": "python3 " + shlex.join(sys.argv), "date": datetime.date.today().isoformat()}

def compare_combo(device: str, rounds: int) -> dict:
    "Compiled SGD (beside torch's fused SGD) and compiled AdamW (bf16 + Kahan, int8) with Inductor's combo kernels (as shipped on a GPU) and without"
    from optimi_nb import SGD
    warnings.filterwarnings("ignore")
    # through torch.compile, uncaptured, with combo kernels or without: compiled calls take their options from compiled_form
    sgd = lambda: through_torch_compile(SGD(make_params(torch.float32, device), lr=1e-3, momentum=0.9, compiled=True))
    adamw = lambda **kw: through_torch_compile(AdamW(make_params(torch.bfloat16, device), lr=1e-3, compiled=True, **kw))
    groups = {"SGD fp32, momentum 0.9": {"torch fused": torch.optim.SGD(make_params(torch.float32, device), lr=1e-3, momentum=0.9, fused=True),
                                         "compiled, without combo kernels": WithoutComboKernels(sgd()), "compiled": sgd()},
              "AdamW bf16": {BASELINE: adamw(), "bf16 + Kahan, compiled, without combo kernels": WithoutComboKernels(adamw()),
                             "int8, compiled, without combo kernels": WithoutComboKernels(adamw(**INT8)), "int8, compiled": adamw(**INT8)}}
    result = {"device": torch.cuda.get_device_name() if device.startswith("cuda") else device, "torch": torch.__version__}
    for title, steppers in groups.items():
        for opt in steppers.values():
            for _ in range(3): opt.step()
        seconds = interleaved_medians(steppers, device, rounds=rounds)
        first = next(iter(seconds.values()))
        result[title] = {name: {"ms": seconds[name] * 1e3, "ratio": seconds[name] / first, "host ms": host_ms(opt, rounds),
                                "kernels": sum(kernels_per_step(opt).values()) if device.startswith("cuda") else None}
                         for name, opt in steppers.items()}
        print(f"== {title} (ratios to {next(iter(seconds))})")
        for name, row in result[title].items():
            print(f"{name:46}  {row['ms']:8.3f} ms  {row['ratio']:5.2f}×  host {row['host ms']:.3f} ms  kernels {row['kernels']}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--record", action="store_true", help="store the figures in nbs/measured.json")
    parser.add_argument("--profile", action="store_true", help="where the host's time goes in each compiled step")
    parser.add_argument("--shapes", default="small", choices=SHAPE_SETS, help="the parameter tensors (benchmark.py's sets)")
    parser.add_argument("--views", action="store_true", help="the compiled 8-bit step with its views reused and made in each call")
    parser.add_argument("--combo", action="store_true", help="compiled SGD and AdamW with Inductor's combo kernels (as shipped on a GPU) and without")
    args = parser.parse_args()
    if args.record and args.shapes != "small": parser.error(f"--record stores the figures of the 12.6M parameters, not of --shapes {args.shapes}")
    benchmark.SHAPES = SHAPE_SETS[args.shapes]  # what make_params makes
    if args.views: return compare_views(args.device, args.rounds)
    if args.combo:
        result = compare_combo(args.device, args.rounds)
        if args.record and args.device.startswith("cuda"):
            from optimi_nb.memory import record_measured
            record_measured("combo_kernels_cuda", result | dated(), path=Path(__file__).parent.parent / "nbs" / "measured.json")
        return
    if args.profile:
        for name, options in {"bf16 + Kahan": {}, "int8 states + int8 residual": INT8}.items():
            opt = AdamW(make_params(torch.bfloat16, args.device), lr=1e-3, compiled=True, **options)
            for _ in range(3): opt.step()
            print(f"== {name}, compiled, on {args.device}\n{host_profile(opt)}")
        return
    rows = measure(args.device, args.rounds)
    width = max(map(len, rows))
    for name, row in rows.items(): print(f"{name:{width}}  {row['ms']:8.2f} ms  {row['ratio']:6.2f}×")
    result = rows
    if args.device.startswith("cuda"):
        facts = kernel_facts()
        for name, row in facts.items(): print(name, row)
        result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "steps": rows, "kernels": facts} | dated()
    if args.record:
        from optimi_nb.memory import record_measured
        record_measured("speed_8bit" if args.device == "cpu" else "speed_8bit_cuda", result, path=Path(__file__).parent.parent / "nbs" / "measured.json")


if __name__ == "__main__": main()
