"""The compiled int8 AdamW step on a GPU with Inductor's default launch settings and with coordinate descent tuning.

One AdamW step of 8 bf16 matrices of 8192 x 8192 (537M parameters) with int8 states and the int8 residual, compiled and
not recorded as a CUDA graph, timed with CUDA events in rounds interleaved with an fp32 copy of as many elements (the
bandwidth); the floor is 12 bytes per parameter over that bandwidth. Each setting runs in a process of its own, so
that each compiles anew: `default` takes coordinate descent out of the options `compiled_form` gives Inductor on a GPU,
`tuned` keeps it. Each process also prints torch.profiler's kernel table of three steps. `--record` stores the
figures in nbs/measured.json, section `int8_tuning_cuda`. GPU only.

    python3 benchmarks/int8_tuning.py [--rounds 15] [--record]
"""
import argparse, json, statistics, subprocess, sys
from pathlib import Path
import torch

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = {"default": "Inductor's default launch settings", "tuned": "coordinate descent tuning"}

def untuned():
    "Compiled updates made from here on without coordinate descent tuning"
    import optimi_nb.compiled_call as calls, optimi_nb.update as update
    form = update.compiled_form
    def without_tuning(device_type: str):
        core, options = form(device_type)
        return core, {k: v for k, v in options.items() if k != "coordinate_descent_tuning"}
    calls.compiled_form = update.compiled_form = without_tuning

def measure(setting: str, rounds: int) -> dict:
    "Median ms of the step and of the copy, in this process, with `setting`'s launch settings"
    if setting == "default": untuned()
    import optimi_nb
    gen = torch.Generator("cuda").manual_seed(0)
    params = [torch.randn(8192, 8192, device="cuda", generator=gen).bfloat16().requires_grad_() for _ in range(8)]
    for p in params: p.grad = (torch.randn(p.shape, device="cuda", generator=gen) * 1e-2).bfloat16()
    opt = optimi_nb.AdamW(params, lr=1e-3, compiled=True, state_precision="int8", kahan_precision="int8")
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
    floor_ms = copy_ms * 12 / 8
    return dict(ms=round(step_ms, 3), copy_ms=round(copy_ms, 3), bandwidth_TBps=round(numel * 8 / copy_ms / 1e9, 2),
                floor_ms=round(floor_ms, 3), of_floor=round(floor_ms / step_ms, 2))

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--record", action="store_true", help="store the figures in measured.json")
    parser.add_argument("--setting", choices=list(SETTINGS), help=argparse.SUPPRESS)  # one process's setting
    args = parser.parse_args()
    if not torch.cuda.is_available(): sys.exit(f"int8_tuning: torch {torch.__version__} sees no CUDA GPU; none run")
    sys.path.insert(0, str(ROOT))
    if args.setting: print(json.dumps(measure(args.setting, args.rounds))); return
    rows = {}
    for setting, label in SETTINGS.items():
        run = subprocess.run([sys.executable, __file__, "--setting", setting, "--rounds", str(args.rounds)],
                             capture_output=True, text=True, check=True)
        print(run.stderr[-3000:], file=sys.stderr)
        rows[label] = json.loads(run.stdout.strip().splitlines()[-1])
        print(label, rows[label], flush=True)
    if args.record:
        path = ROOT / "nbs" / "measured.json"
        measured = json.loads(path.read_text())
        measured["int8_tuning_cuda"] = dict(device=torch.cuda.get_device_name(), torch=torch.__version__, rows=rows,
                                            command="python3 " + " ".join(sys.argv), floor_bytes_per_parameter=12)
        path.write_text(json.dumps(measured, indent=1, ensure_ascii=False) + "\n")

if __name__ == "__main__": main()
