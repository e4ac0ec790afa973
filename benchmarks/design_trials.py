"""Five designs the library did not take, each timed against the one it took: one AdamW step on the CPU, one thread,
benchmarks/benchmark.py's 12.6M bf16 parameters in 72 tensors, rows interleaved in one process (benchmark.py's method).

    python3 benchmarks/design_trials.py [--rounds 20] [--record]

Chapters Kahan summation (02) and Speed (40) quote the first two, Layout (04a) the next two, Update (04c) and 8-bit
states (35) the last:
- `precision casts`: the compiled bf16 + Kahan step compiled with Inductor's `emulate_precision_casts` (every eager
  rounding kept, so Kahan's compensation survives without explicit rounding), against the library's compiled step;
- `rounding by bits`: the compiled bf16 + Kahan step with its commit rounded by integer arithmetic on the bits
  (`round_by_bits`, what a GPU runs), against Veltkamp's splitting (`round_by_splitting`, what a CPU runs);
- `views inside`: the compiled int8 step (int8 states and residual) with its block views made inside the compiled code,
  against made once before it (the step plan's);
- `a call per tensor`: the compiled int8 step with one compiled call per tensor, against foreach chunks of many;
- `dynamic shapes`: the compiled int8 step through `torch.compile` with its sizes symbolic (what torch.compile makes
  them once a size changes between calls), against static sizes, also through `torch.compile`.
Each trial's steps run with its patch on, so its code is planned and traced with it. `--record` stores each
variant's median and its ratio to its baseline in nbs/measured.json, section `design_trials`."""
import argparse, contextlib, functools, sys, types, warnings
from pathlib import Path
import torch

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parent.parent)]
from benchmark import interleaved_medians, make_params
import optimi_nb.compiled_call, optimi_nb.kahan, optimi_nb.plan, optimi_nb.update_run
from optimi_nb import AdamW
from optimi_nb.layout import block_views, flat_views

INT8 = dict(state_precision="int8", kahan_precision="int8")
# trial -> (the baseline it is timed against, AdamW's options)
# baselines: (name, AdamW's options, compiled calls made directly (else through torch.compile))
KAHAN, CODES = ("bf16 + Kahan", {}, True), ("int8 states + int8 residual", INT8, True)
CODES_TORCH_COMPILE = ("int8 states + int8 residual, through torch.compile", INT8, False)
# trial -> the baseline it is timed against, whose options it takes
TRIALS = {"precision casts": KAHAN, "rounding by bits": KAHAN, "views inside": CODES, "a call per tensor": CODES,
          "dynamic shapes": CODES_TORCH_COMPILE}


@contextlib.contextmanager
def patched(module, name: str, value):
    "`module.name` set to `value` inside the context"
    original = getattr(module, name)
    setattr(module, name, value)
    try: yield
    finally: setattr(module, name, original)


def with_options(extra: dict):
    "`compiled_form` with Inductor options `extra` added"
    form = optimi_nb.compiled_call.compiled_form
    def compiled_form(device_type, codes=False):
        core, options = form(device_type, codes)
        return core, options | extra
    return compiled_form


def views_made_inside():
    "`compiled_form` whose core makes the block (or flat) views itself, from the tensors as stored"
    form = optimi_nb.compiled_call.compiled_form
    def compiled_form(device_type, codes=False):
        core, options = form(device_type, codes)
        def inside(update, weight_decay_, accumulate, group, scalars, param, grad, *tensors):
            viewed = block_views((param, grad, *tensors)) or flat_views((param, grad, *tensors))
            return core(update, weight_decay_, accumulate, group, scalars, *viewed)
        return inside, options
    return compiled_form


@functools.cache
def dynamic_update_core(device_type: str = "cpu", codes: bool = False):
    "`compiled_update_core` with symbolic sizes"
    core, options = optimi_nb.compiled_call.compiled_form(device_type, codes)
    return torch.compile(core, dynamic=True, options=options)


def trial_patches(trial: str) -> list:
    "The patches under which `trial`'s step is planned and traced"
    if trial == "precision casts": return [(optimi_nb.compiled_call, "compiled_form",
                                            with_options({"emulate_precision_casts": True}))]
    if trial == "rounding by bits": return [(optimi_nb.kahan, "round_to", optimi_nb.kahan.round_by_bits)]
    if trial == "views inside":  # the plan keeps the tensors as stored; the compiled code views them
        keep = lambda tensors: tensors
        return [(optimi_nb.update_run, "block_views", keep),
                (optimi_nb.compiled_call, "compiled_form", views_made_inside())]
    if trial == "a call per tensor":
        return [(optimi_nb.plan, "chunks_of", lambda members, max_numel: [[m] for m in members])]
    if trial == "dynamic shapes": return [(optimi_nb.compiled_call, "compiled_update_core", dynamic_update_core)]
    raise ValueError(f"unknown trial {trial!r}")


def own_update():
    "A copy of AdamW's update function: compiled code is cached per update function, so a trial's code stays its own"
    f = AdamW.update
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)


class Trial:
    "A compiled AdamW whose every step runs with `patches` on: its plan and compiled code are made with them"
    def __init__(self, options: dict, direct_calls: bool, patches: list):
        self.opt, self.patches = AdamW(make_params(torch.bfloat16, "cpu"), lr=1e-3, compiled=True, **options), patches
        self.opt.direct_calls = direct_calls
        if patches: self.opt.update = own_update()

    def step(self):
        with contextlib.ExitStack() as stack:
            for module, name, value in self.patches: stack.enter_context(patched(module, name, value))
            self.opt.step()


def steppers() -> dict:
    "name -> a warmed-up Trial: the baselines, then each trial"
    rows = {name: Trial(options, direct, []) for name, options, direct in (KAHAN, CODES, CODES_TORCH_COMPILE)}
    rows |= {trial: Trial(options, direct, trial_patches(trial)) for trial, (_, options, direct) in TRIALS.items()}
    for row in rows.values():
        for _ in range(3): row.step()  # state, plan and compiled code
    return rows


def measure(rounds: int = 20) -> dict:
    "Median ms of each row, and each trial's ratio to its baseline's"
    warnings.filterwarnings("ignore")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # chapter 35's setting: a descheduled thread would dominate on a shared machine
    try: seconds = interleaved_medians(steppers(), "cpu", rounds=rounds)
    finally: torch.set_num_threads(threads)
    result = {name: {"ms": seconds[name] * 1e3} for name, _, _ in (KAHAN, CODES, CODES_TORCH_COMPILE)}
    for trial, (baseline, _, _) in TRIALS.items():
        result[trial] = {"ms": seconds[trial] * 1e3, "baseline": baseline, "ratio": seconds[trial] / seconds[baseline]}
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--record", action="store_true", help="store the figures in nbs/measured.json")
    args = parser.parse_args()
    result = measure(args.rounds)
    for name, row in result.items():
        against = f"  {row['ratio']:.2f}× {row['baseline']}" if "ratio" in row else ""
        print(f"{name:52s} {row['ms']:8.2f} ms{against}")
    if args.record:
        from optimi_nb.memory import record_measured
        command = f"python3 benchmarks/design_trials.py --rounds {args.rounds} --record"
        record_measured("design_trials", {"command": command, "torch": torch.__version__, "rows": result},
                        path=Path(__file__).parent.parent / "nbs" / "measured.json")


if __name__ == "__main__": main()
