"""Re-measure the figures of nbs/36_4bit_states.ipynb: memory per parameter, checkpoint size and quality of AdamW with
4-bit states, next to fp32, bf16 + Kahan and 8-bit states; writes nbs/4bit.json, which the chapter reads.

Usage: python3 benchmarks/measure_4bit.py [--only memory checkpoint quality dither] [--seeds 5]
(quality: about 12 minutes on one CPU core; dither, which rounding of the 4-bit codes the update takes: about 8)
torchao's AdamW4bit runs beside ours where torchao is installed (a test-only dependency); its rows are left out otherwise."""
import argparse, contextlib, io, json, logging, math, sys, warnings
from pathlib import Path
import torch, torch.nn.functional as F
from torch import nn
from optimi_nb import AdamW, SGD, Lion, Adan, Muon, codecs, prepare_for_gradient_release
from optimi_nb.memory import record_measured, step_memory
from optimi_nb.muon import muon_param_groups
from optimi_nb.testing import char_batch, char_eval_loss, char_model, weights

INT8 = dict(state_precision="int8", kahan_precision="int8")  # bf16 weights: 8-bit states and the int8 residual
INT4 = dict(state_precision="int4", kahan_precision="int8")  # bf16 weights: 4-bit states and the int8 residual
RESULTS = Path(__file__).resolve().parents[1] / "nbs" / "4bit.json"
MEASURED = RESULTS.with_name("measured.json")  # figures other pages quote: the 4-bit rows are stored there too

for _name in ("torchao", "torch.utils._pytree"): logging.getLogger(_name).setLevel(logging.ERROR)  # torchao's CUDA libraries, missing on a CPU
warnings.filterwarnings("ignore", message=".*_stable_hash_for_caching.*")  # torchao's state tensors and torch.compile's cache
try: from torchao.optim import AdamW4bit  # optional, for tests only
except ImportError: AdamW4bit = None

# --- memory: the memory lab's model and method (nbs/30_memory.ipynb, nbs/35_8bit_states.ipynb)
def mlp(dtype: torch.dtype) -> nn.Module:
    "The memory lab's model: 16 blocks of Linear(512, 512) and ReLU, 4.2M parameters"
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(nn.Linear(512, 512), nn.ReLU()) for _ in range(16)]).to(dtype)

def unnamed(groups: list[dict]) -> list[dict]:
    "Param groups of (name, parameter) pairs as groups of parameters"
    return [g | {"params": [p for _, p in g["params"]]} for g in groups]

OPTIMIZERS = {"AdamW": lambda model, **kw: AdamW(model.parameters(), lr=1e-3, **kw),
              "SGD momentum": lambda model, **kw: SGD(model.parameters(), lr=1e-3, momentum=0.9, **kw),
              "Lion": lambda model, **kw: Lion(model.parameters(), lr=1e-4, **kw),
              "Adan": lambda model, **kw: Adan(model.parameters(), lr=1e-3, **kw),
              "Muon": lambda model, **kw: Muon(unnamed(muon_param_groups(model)), lr=1e-3, **kw)}
MEMORY_CONFIGS = {"fp32": dict(dtype=torch.float32), "bf16 + Kahan": {}, "bf16 + Kahan, gradient release": dict(release=True),
                  "bf16 + int8 states + int8 residual": INT8, "bf16 + int8 states + int8 residual, gradient release": INT8 | dict(release=True),
                  "bf16 + int4 states + int8 residual": INT4, "bf16 + int4 states + int8 residual, gradient release": INT4 | dict(release=True)}

def measure_step(make, dtype: torch.dtype = torch.bfloat16, release: bool = False, **kw) -> dict[str, float]:
    "step_memory of one step of the 16-block MLP, and the optimizer state kept between steps, in bytes per parameter"
    model = mlp(dtype)
    opt = make(model, gradient_release=release, **kw)
    if release: prepare_for_gradient_release(model, opt)
    x = torch.randn(16, 512, dtype=dtype)
    def step(tracker): model(x).float().square().mean().backward(); opt.step(); opt.zero_grad()
    peak = step_memory(model, opt, step)
    n = sum(p.numel() for p in model.parameters())
    return peak | {"kept": sum(t.nbytes for s in opt.state.values() for t in s.values() if torch.is_tensor(t)) / n}

def memory() -> dict:
    "Bytes per parameter at the peak of a step, by category, for every optimizer and storage"
    return {name: {config: measure_step(make, **kw) for config, kw in MEMORY_CONFIGS.items()} for name, make in OPTIMIZERS.items()}

# --- checkpoint size
def checkpoint() -> dict:
    "Megabytes of torch.save of AdamW's state_dict (and with the model's) after one step of the 16-block MLP"
    sizes = {}
    for config, kw in {"fp32": dict(dtype=torch.float32), "bf16 + Kahan": {}, "bf16 + int8 states + int8 residual": INT8,
                       "bf16 + int4 states + int8 residual": INT4}.items():
        kw = dict(kw); dtype = kw.pop("dtype", torch.bfloat16)
        model = mlp(dtype); opt = AdamW(model.parameters(), lr=1e-3, **kw)
        model(torch.randn(16, 512, dtype=dtype)).float().square().mean().backward(); opt.step()
        sizes[config] = {}
        for key, saved in (("optimizer_mb", opt.state_dict()), ("total_mb", {"model": model.state_dict(), "optimizer": opt.state_dict()})):
            buffer = io.BytesIO(); torch.save(saved, buffer); sizes[config][key] = buffer.tell() / 1e6
    return sizes

# --- quality: held-out loss and distance from the fp32 trajectory, on two tasks, over seeds
def digits_data() -> tuple[torch.Tensor, torch.Tensor]:
    "scikit-learn's 1,797 handwritten digits (8 × 8 pixels scaled to [0, 1]) and their labels; the first 1,440 train, the rest are held out"
    from sklearn.datasets import load_digits
    digits = load_digits()
    return torch.tensor(digits.data, dtype=torch.float32) / 16, torch.tensor(digits.target)

def digits_model(dtype: torch.dtype = torch.float32, seed: int = 0) -> nn.Module:
    "A GELU MLP 64 → 256 → 256 → 10; its two first matrices (16,384 and 65,536 elements) are large enough to quantize"
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 10))
    return model.to(dtype)

def digits_batch(i: int, size: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    "Batch `i`: `size` training digits drawn with seed i"
    x, y = digits_data()
    idx = torch.randint(0, 1440, (size,), generator=torch.Generator().manual_seed(i))
    return x[idx], y[idx]

def digits_eval_loss(model: nn.Module) -> float:
    "Cross-entropy on the 357 held-out digits, in fp32"
    x, y = digits_data()
    with torch.no_grad(): return F.cross_entropy(model(x[1440:].to(next(model.parameters()).dtype)).float(), y[1440:]).item()

TASKS = {  # name -> (model(dtype, seed), batch(i), held-out loss(model), steps, learning rates swept for fp32 AdamW)
    "characters": (char_model, lambda i: char_batch(i, 128), char_eval_loss, 600, (1e-3, 2e-3, 3e-3, 5e-3, 1e-2)),
    "digits": (digits_model, digits_batch, digits_eval_loss, 300, (3e-4, 1e-3, 2e-3, 3e-3))}
EVERY = 100  # steps between the weights kept for the distance from the fp32 trajectory

def torchao_adamw4bit(params, lr: float, **kw):
    "torchao's AdamW4bit with our AdamW's defaults (betas, eps, weight decay)"
    return AdamW4bit(params, lr=lr, betas=(0.9, 0.99), eps=1e-6, weight_decay=1e-2)

QUALITY = {"fp32": dict(dtype=torch.float32), "bf16 + Kahan": dict(dtype=torch.bfloat16), "bf16, no Kahan": dict(dtype=torch.bfloat16, kahan_sum=False),
           "bf16 + int8 states + int8 residual": dict(dtype=torch.bfloat16, **INT8), "bf16 + int4 states + int8 residual": dict(dtype=torch.bfloat16, **INT4),
           "fp32 + int4 states": dict(dtype=torch.float32, state_precision="int4"), "torchao AdamW4bit, fp32": dict(dtype=torch.float32, make=torchao_adamw4bit)}
if AdamW4bit is None: del QUALITY["torchao AdamW4bit, fp32"]

def train(task: str, seed: int, lr: float, dtype: torch.dtype = torch.float32, make=AdamW, **kw) -> tuple[float, list[list[torch.Tensor]]]:
    "Held-out loss of `task`'s model trained from initialisation `seed`, and its weights every EVERY steps"
    new_model, batch, eval_loss, steps, _ = TASKS[task]
    model = new_model(dtype, seed=seed); opt = make(model.parameters(), lr=lr, **kw)
    kept = []
    for i in range(steps):
        x, y = batch(i)
        F.cross_entropy(model(x if x.dtype == torch.long else x.to(dtype)).float(), y).backward(); opt.step(); opt.zero_grad()
        if (i + 1) % EVERY == 0: kept.append(weights(model))
    return eval_loss(model), kept

def distance(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    "‖a − b‖ / ‖b‖ over all the weights"
    return (torch.cat([(x.float() - y.float()).flatten() for x, y in zip(a, b)]).norm() / torch.cat([y.float().flatten() for y in b]).norm()).item()

def quality(seeds: int = 5, log=print) -> dict:
    "For each task: fp32 AdamW's learning-rate sweep, then each storage's held-out loss and distance from the fp32 run of the same seed"
    results = {}
    for task, (_, _, _, steps, rates) in TASKS.items():
        sweep = {lr: [train(task, seed, lr)[0] for seed in range(3)] for lr in rates}
        lr = min(sweep, key=lambda r: sum(sweep[r]))
        log(f"{task}: lr {lr} from {({r: round(sum(l) / 3, 4) for r, l in sweep.items()})}")
        runs = {name: [train(task, seed, lr, **kw) for seed in range(seeds)] for name, kw in QUALITY.items()}
        results[task] = {"lr": lr, "steps": steps, "sweep": {str(r): l for r, l in sweep.items()}, "runs": {
            name: {"loss": [loss for loss, _ in r],
                   "distance": [[distance(w, f) for w, f in zip(kept, runs["fp32"][seed][1])] for seed, (_, kept) in enumerate(r)]}
            for name, r in runs.items()}}
        log(f"{task}: " + ", ".join(f"{name} {sum(r['loss']) / seeds:.4f}" for name, r in results[task]["runs"].items()))
    return results

# --- dither: how the update rounds 4-bit codes, on the quality runs' tasks (bf16 + int4 states + int8 residual)
def random_round_codes_(y, levels, offset=None, positions=None):
    "`round_codes_` with a random u in place of the low-discrepancy one: stochastic rounding"
    if offset is None: return y.round_()
    return y.add_(torch.rand_like(y)).floor_().clamp_max_(levels)

def dithered_nonnegative_codes_(roots, scales, levels, step: list):
    "`nonnegative_codes_` rounded with a dither of its own rate, frac(j·α + t·(√3 - 1)), at the step in `step`"
    zero, denominators = roots.gt(0).logical_not_(), roots.add(scales.clamp_min(codecs.TINY))
    offset = math.fmod(step[0] * (3 ** 0.5 - 1), 1.0)
    return codecs.round_codes_(roots.mul_(2 * levels).div_(denominators), levels, offset).clamp_min_(1).masked_fill_(zero, 0)

def rounding(name: str):
    "A context in which every update rounds its codes as `name` says; the library's: signed codes dithered"
    from unittest import mock
    if name == "to nearest": return mock.patch("optimi_nb.update_run.dither_offset", lambda step: None)
    if name == "m, random u": return mock.patch("optimi_nb.codecs.round_codes_", random_round_codes_)
    if name == "m dithered (the library's)": return contextlib.nullcontext()
    step = [0]  # the step of the update running: recorded where its dither offset is computed
    def offset(t): step[0] = t; return codecs.dither_offset(t)
    stack = contextlib.ExitStack()
    stack.enter_context(mock.patch("optimi_nb.update_run.dither_offset", offset))
    stack.enter_context(mock.patch("optimi_nb.codecs.nonnegative_codes_", lambda r, s, levels: dithered_nonnegative_codes_(r, s, levels, step)))
    return stack

ROUNDINGS = ("to nearest", "m dithered (the library's)", "m, random u", "m and v dithered")

def dither(quality_results: dict, seeds: int = 5, log=print) -> dict:
    "Held-out loss of bf16 + int4 states + int8 residual on each task at its chosen lr, for each rounding of the codes"
    results = {}
    for task, q in quality_results.items():
        results[task] = {}
        for name in ROUNDINGS:
            with rounding(name): results[task][name] = [train(task, seed, q["lr"], dtype=torch.bfloat16, **INT4)[0] for seed in range(seeds)]
        log(f"{task}: " + ", ".join(f"{name} {sum(l) / seeds:.4f}" for name, l in results[task].items()))
    return results

def main(argv: list[str] | None = None):
    "Measure what the command line asks for and update the JSON file"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=["memory", "checkpoint", "quality", "dither"], help="which measurements to redo")
    parser.add_argument("--seeds", type=int, default=5, help="seeds of the quality runs")
    parser.add_argument("--out", default=str(RESULTS), help="the JSON file to update")
    args = parser.parse_args(argv)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: the figures do not depend on it, and a shared machine stays usable
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.exists() else {}
    for what in args.only:
        results[what] = {"memory": memory, "checkpoint": checkpoint, "quality": lambda: quality(args.seeds),
                         "dither": lambda: dither(results["quality"], args.seeds)}[what]()
        out.write_text(json.dumps(results, indent=1) + "\n")
        if what in ("memory", "checkpoint") and out.resolve() == RESULTS:  # the 4-bit rows that other pages quote, stored once
            int4 = lambda rows: {config: r for config, r in rows.items() if "int4" in config}
            record_measured(what, {name: int4(rows) for name, rows in results[what].items()} if what == "memory" else int4(results[what]), path=MEASURED)
        print(f"{what}: written to {out}", flush=True)
    torch.set_num_threads(threads)

if __name__ == "__main__": main()
