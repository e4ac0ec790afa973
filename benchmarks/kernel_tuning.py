"""The compiled AdamW step on a GPU under three sets of Inductor's launch settings: default, tuned, tuned foreach too.

One AdamW step of 8 bf16 matrices of 8192 x 8192 (537M parameters), with Kahan summation (18 bytes per parameter) and
with int8 states and the int8 residual (12), compiled and not recorded as a CUDA graph, timed with CUDA events in rounds
interleaved with an fp32 copy of as many elements (the bandwidth); the floor is those bytes over that bandwidth. Each
setting runs in a process of its own, so that each compiles anew, from the GPU's options in `compiled_form` (which
tune coded states' kernels only, after this script's first run):
- `default`: without coordinate descent tuning, Inductor's heuristic launch settings;
- `tuned`: coordinate descent tuning at each kernel's first run;
- `foreach`: tuned, and `combo_kernels_autotune=2`: the foreach kernels of a bucket (a fixed block of 1024 elements
  otherwise) get autotuned launch settings as well.
Each process also prints torch.profiler's kernel table of three steps. `--record` stores the figures in
nbs/measured.json, section `kernel_tuning_cuda`. GPU only.

    python3 benchmarks/kernel_tuning.py [--rounds 15] [--storages bf16+kahan int8] [--record]
"""
import argparse, datetime, json, statistics, subprocess, sys
from pathlib import Path
import torch

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = {"default": "Inductor's default launch settings", "tuned": "coordinate descent tuning",
            "foreach": "coordinate descent tuning, foreach kernels autotuned"}
INT8, INT4 = (dict(state_precision=bits, kahan_precision="int8") for bits in ("int8", "int4"))
STORAGES = {"bf16+kahan": ("bf16 + Kahan", {}, 18), "int8": ("int8 states + int8 residual", INT8, 12),
            "int4": ("int4 states + int8 residual", INT4, 10)}  # int4: measured by benchmarks/arithmetic_trials.py

def set_options(setting: str):
    "Compiled updates made from here on with `setting`'s Inductor options"
    import optimi_nb.compiled_call as calls, optimi_nb.update as update
    form = update.compiled_form
    def with_setting(device_type: str, codes: bool = False):
        core, options = form(device_type, codes)
        options = options | {"coordinate_descent_tuning": setting != "default"}
        if setting == "foreach": options = options | {"combo_kernels_autotune": 2}
        return core, options
    calls.compiled_form = update.compiled_form = with_setting

def measure(storage: str, setting: str, rounds: int) -> dict:
    "Median ms of the step and of the copy, in this process, in `storage` with `setting`'s launch settings"
    set_options(setting)
    import optimi_nb
    _, options, floor_bytes = STORAGES[storage]
    gen = torch.Generator("cuda").manual_seed(0)
    params = [torch.randn(8192, 8192, device="cuda", generator=gen).bfloat16().requires_grad_() for _ in range(8)]
    for p in params: p.grad = (torch.randn(p.shape, device="cuda", generator=gen) * 1e-2).bfloat16()
    opt = optimi_nb.AdamW(params, lr=1e-3, compiled=True, **options)
    opt.capture_steps = False  # the kernels' time, not the host's
    numel = sum(p.numel() for p in params)
    src, dst = torch.randn(numel, device="cuda"), torch.empty(numel, device="cuda")
    copy = lambda: dst.copy_(src)
    for _ in range(3): opt.step(); copy()  # compiles and tunes
    def timed(fn) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize(); start.record(); fn(); end.record(); end.synchronize()
        return start.elapsed_time(end)
    times = [(timed(opt.step), timed(copy)) for _ in range(rounds)]
    step_ms, copy_ms = (statistics.median(t[i] for t in times) for i in (0, 1))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(3): opt.step()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=5, max_name_column_width=90), file=sys.stderr)
    floor_ms = copy_ms * floor_bytes / 8
    return dict(ms=round(step_ms, 3), copy_ms=round(copy_ms, 3), bandwidth_TBps=round(numel * 8 / copy_ms / 1e9, 2),
                floor_ms=round(floor_ms, 3), of_floor=round(floor_ms / step_ms, 2))

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--storages", nargs="*", choices=list(STORAGES), default=["bf16+kahan", "int8"])
    parser.add_argument("--record", action="store_true", help="store the figures in measured.json")
    parser.add_argument("--run", nargs=2, help=argparse.SUPPRESS)  # one process's storage and setting
    args = parser.parse_args()
    if not torch.cuda.is_available(): sys.exit(f"kernel_tuning: torch {torch.__version__} sees no CUDA GPU; none run")
    sys.path.insert(0, str(ROOT))
    if args.run: print(json.dumps(measure(*args.run, args.rounds))); return
    tables = {}
    for storage in args.storages:
        label, _, floor_bytes = STORAGES[storage]
        rows = {}
        for setting, name in SETTINGS.items():
            run = subprocess.run([sys.executable, __file__, "--run", storage, setting, "--rounds", str(args.rounds)],
                                 capture_output=True, text=True)
            print(run.stderr[-3000:], file=sys.stderr)
            why = (run.stderr.strip().splitlines() or [f"exit status {run.returncode}"])[-1][:200]
            rows[name] = json.loads(run.stdout.strip().splitlines()[-1]) if run.returncode == 0 else dict(error=why)
            print(label, "·", name, rows[name], flush=True)
        tables[label] = dict(floor_bytes_per_parameter=floor_bytes, rows=rows)
    if args.record:
        path = ROOT / "nbs" / "measured.json"
        measured = json.loads(path.read_text())
        measured["kernel_tuning_cuda"] = dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                                              command="python3 " + " ".join(sys.argv),
                                              date=datetime.date.today().isoformat(), **tables)
        path.write_text(json.dumps(measured, indent=1, ensure_ascii=False) + "\n")

if __name__ == "__main__": main()
