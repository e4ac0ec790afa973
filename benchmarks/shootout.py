"""Chapter 41's shoot-out: every optimizer of optimi_nb on three small CPU tasks, each with its learning rate tuned on the same grid.

Each optimizer's lr is tuned on seed 0 (validation loss, five values spaced x3 around its centre); the best lr is then trained
from seeds 1, 2 and 3, whose test losses and held-out curves are recorded, with the time of a step measured side by side with
torch.optim.AdamW and the bytes of optimizer state per parameter; then AdamW on the transformer for 1.5, 2 and 3 times the steps.
One thread throughout. Usage: python3 benchmarks/shootout.py [--quick] [--json PATH] [--optimizers NAME ...]
(about 10 minutes of CPU time; --quick: a smoke test of about a minute, which writes nothing unless given --json)"""
import argparse, dataclasses, importlib, json, math, statistics, sys, time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable
import pydoc_data.topics
import torch
import torch.nn.functional as F
from torch import Tensor, nn
sys.path.append(str(Path(__file__).resolve().parent.parent))  # optimi_nb from this checkout, when it is not installed
import optimi_nb
from optimi_nb import muon_param_groups, param_groups_weight_decay
from optimi_nb.testing import char_batch, char_model

WEIGHT_DECAY, WARMUP = 0.01, 0.1  # λ on matrices and embeddings (none on biases and norms); warmup as a share of the steps
GRID, TUNING_SEED, SEEDS = (1 / 9, 1 / 3, 1, 3, 9), 0, (1, 2, 3)  # the lr grid, as factors of each optimizer's centre
POINTS, ROUNDS, EXTENSIONS = 10, 60, 2  # held-out losses along each reported run; rounds of the step timing; x3 steps added beyond a grid edge

# Task 1: the character model of optimi_nb.testing on argparse.py's source, predicting the 9th character from 8
def char_loss(model: nn.Module, step: int, seed: int) -> Tensor:
    x, y = char_batch(seed * 100_000 + step, 64)
    return F.cross_entropy(model(x), y)

def char_held_out(model: nn.Module, split: str) -> Tensor:
    x, y = char_batch(10_000 if split == "test" else 20_000, 2048, train=False)  # test: char_eval_loss's windows
    return F.cross_entropy(model(x), y)

# Task 2: a two-layer causal transformer on the prose of Python's help topics (pydoc_data.topics), character level
CONTEXT, WIDTH, HEADS = 32, 64, 4

@lru_cache(maxsize=1)
def prose() -> tuple[list[str], dict[str, Tensor]]:
    "The characters of the help topics (non-ASCII as '?') and the text as indices: train 90%, validation 5%, test 5%"
    topics = pydoc_data.topics.topics
    text = "".join(c if c.isascii() else "?" for k in sorted(topics) for c in topics[k])
    vocab = sorted(set(text)); index = {c: i for i, c in enumerate(vocab)}
    data, n = torch.tensor([index[c] for c in text]), len(text)
    return vocab, {"train": data[:int(0.9 * n)], "validation": data[int(0.9 * n):int(0.95 * n)], "test": data[int(0.95 * n):]}

def windows(split: str, size: int, seed: int) -> tuple[Tensor, Tensor]:
    "`size` random windows of CONTEXT characters of `split`, and the same shifted by one (the targets)"
    source = prose()[1][split]
    starts = torch.randint(0, len(source) - CONTEXT - 1, (size,), generator=torch.Generator().manual_seed(seed))
    x = torch.stack([source[s:s + CONTEXT + 1] for s in starts.tolist()])
    return x[:, :-1], x[:, 1:]

class Block(nn.Module):
    "Pre-norm transformer block: causal self-attention, then a GELU MLP of width 4d"
    def __init__(self):
        super().__init__()
        self.norm1, self.qkv, self.proj = nn.LayerNorm(WIDTH), nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
        self.norm2, self.up, self.down = nn.LayerNorm(WIDTH), nn.Linear(WIDTH, 4 * WIDTH), nn.Linear(4 * WIDTH, WIDTH)
    def forward(self, x: Tensor) -> Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, HEADS, WIDTH // HEADS).permute(2, 0, 3, 1, 4)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, WIDTH))
        return x + self.down(F.gelu(self.up(self.norm2(x))))

class TinyGPT(nn.Module):
    "Token and position embeddings, two blocks, a final norm and an output layer over the characters"
    def __init__(self, seed: int = 0):
        super().__init__()
        vocab = len(prose()[0])
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            self.embed, self.position = nn.Embedding(vocab, WIDTH), nn.Embedding(CONTEXT, WIDTH)
            self.blocks, self.norm, self.head = nn.Sequential(Block(), Block()), nn.LayerNorm(WIDTH), nn.Linear(WIDTH, vocab)
    def forward(self, x: Tensor) -> Tensor:
        return self.head(self.norm(self.blocks(self.embed(x) + self.position.weight[:x.shape[1]])))

def gpt_loss(model: nn.Module, step: int, seed: int) -> Tensor:
    x, y = windows("train", 16, seed * 100_000 + step)
    return F.cross_entropy(model(x).flatten(0, 1), y.flatten())

def gpt_held_out(model: nn.Module, split: str) -> Tensor:
    x, y = windows(split, 256, 10_000)
    return F.cross_entropy(model(x).flatten(0, 1), y.flatten())

# Task 3: a small CNN on scikit-learn's 8x8 digits (1,797 images): train 70%, validation 15%, test 15%
@lru_cache(maxsize=1)
def digits() -> dict[str, tuple[Tensor, Tensor]]:
    "The digits images (standardised with the training set's mean and std) and labels, by split"
    from sklearn.datasets import load_digits
    d = load_digits()
    x, y = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1), torch.tensor(d.target)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    cut = {"train": order[:int(0.7 * len(y))], "validation": order[int(0.7 * len(y)):int(0.85 * len(y))], "test": order[int(0.85 * len(y)):]}
    mean, std = x[cut["train"]].mean(), x[cut["train"]].std()
    return {split: ((x[i] - mean) / std, y[i]) for split, i in cut.items()}

def digits_model(seed: int = 0) -> nn.Module:
    "Two 3x3 convolutions (16 and 32 channels, the second with stride 2) and a linear layer"
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
                             nn.Flatten(), nn.Linear(32 * 4 * 4, 10))

def digits_loss(model: nn.Module, step: int, seed: int) -> Tensor:
    x, y = digits()["train"]
    i = torch.randint(0, len(y), (32,), generator=torch.Generator().manual_seed(seed * 100_000 + step))
    return F.cross_entropy(model(x[i]), y[i])

def digits_held_out(model: nn.Module, split: str) -> Tensor:
    x, y = digits()[split]
    return F.cross_entropy(model(x), y)

@dataclass
class Task:
    "A training task: a fresh model for a seed, the training loss of step `step`, the loss on a held-out split"
    model: Callable[[int], nn.Module]
    loss: Callable[[nn.Module, int, int], Tensor]
    held_out: Callable[[nn.Module, str], Tensor]
    steps: int
    what: str

TASKS = {"chars": Task(lambda seed: char_model(seed=seed), char_loss, char_held_out, 400,
                       "MLP on 8 characters of argparse.py's source, batch 64"),
         "transformer": Task(TinyGPT, gpt_loss, gpt_held_out, 200,
                             "2-layer causal transformer, d=64, on pydoc_data's help topics, 16 x 32 characters a batch"),
         "digits": Task(digits_model, digits_loss, digits_held_out, 300, "2-conv CNN on sklearn's 8x8 digits, batch 32")}

# The optimizers: each makes an optimizer for (model, lr, steps); λ goes where param_groups_weight_decay or muon_param_groups put it
def plain(cls: Callable, **options) -> Callable:
    "Make `cls` over two param groups: matrices and embeddings with λ, biases and norms without"
    return lambda model, lr, steps: cls(param_groups_weight_decay(model, WEIGHT_DECAY), lr=lr, **options)

def matrix(cls: Callable, **options) -> Callable:
    "Make `cls` over muon_param_groups: hidden matrices orthogonalized, the rest AdamW, all at one lr (match_rms_adamw)"
    return lambda model, lr, steps: cls(muon_param_groups(model), lr=lr, weight_decay=WEIGHT_DECAY, adjust_lr_fn="match_rms_adamw", **options)

def schedule_free(cls: Callable, **options) -> Callable:
    "Make Schedule-Free `cls` with a warmup over the first WARMUP of the steps"
    return lambda model, lr, steps: cls(param_groups_weight_decay(model, WEIGHT_DECAY), lr=lr, warmup_steps=int(WARMUP * steps), **options)

def optional(module: str, name: str) -> Callable:
    "The class `name` of `module`, looked up when called: an ImportError or AttributeError leaves the optimizer out"
    return lambda *args, **kwargs: getattr(importlib.import_module(module), name)(*args, **kwargs)

@dataclass
class Entry:
    "An optimizer of the shoot-out: how to make it, the centre of its lr grid, and whether it is Schedule-Free"
    make: Callable
    centre: float
    schedule_free: bool = False
    options: dict = field(default_factory=dict)  # what the table says about it

# λ in each optimizer's own form: decoupled, θ(1 - γλ), except Adam (L2: the one controlled comparison, Adam vs AdamW),
# SGD (L2, the same thing for SGD), Adan (θ/(1 + γλ)) and SGDScheduleFree (L2 at y). Betas and eps: the library's defaults.
OPTIMIZERS = {
    "torch.optim.AdamW": Entry(plain(torch.optim.AdamW), 3e-3, options=dict(betas=(0.9, 0.999), eps=1e-8)),  # torch's defaults
    "SGD": Entry(plain(optimi_nb.SGD, momentum=0.9), 0.1, options=dict(momentum=0.9)),
    "Adam": Entry(plain(optimi_nb.Adam), 3e-3, options=dict(decay="L2")),
    "AdamW": Entry(plain(optimi_nb.AdamW), 3e-3),
    "AdamW, cautious": Entry(plain(optimi_nb.AdamW, cautious=True), 3e-3, options=dict(cautious=True)),
    "RAdam": Entry(plain(optimi_nb.RAdam, decouple_wd=True), 3e-3, options=dict(decouple_wd=True)),
    "Lion": Entry(plain(optimi_nb.Lion), 3e-4),
    "Adan": Entry(plain(optimi_nb.Adan), 3e-3),
    "Ranger": Entry(plain(optimi_nb.Ranger), 3e-3),
    "StableAdamW": Entry(plain(optimi_nb.StableAdamW), 3e-3),
    "Muon": Entry(matrix(optimi_nb.Muon), 3e-3),
    "NorMuon": Entry(matrix(optional("optimi_nb.normuon", "NorMuon")), 3e-3),
    "SOAP": Entry(plain(optional("optimi_nb.soap", "SOAP")), 3e-3),
    "AdamWScheduleFree": Entry(schedule_free(optimi_nb.AdamWScheduleFree), 3e-3, True),
    "SGDScheduleFree": Entry(schedule_free(optimi_nb.SGDScheduleFree), 1.0, True)}

def available(optimizers: dict[str, Entry] = OPTIMIZERS) -> dict[str, Entry]:
    "The optimizers that can be made: one missing from the library (ImportError) or an option it refuses (TypeError) is left out"
    kept = {}
    for name, entry in optimizers.items():
        try: entry.make(digits_model(), entry.centre, 10)
        except (ImportError, AttributeError, TypeError): continue
        kept[name] = entry
    return kept

# Training and measuring
def warmup_cosine(steps: int) -> Callable[[int], float]:
    "The lr factor of a linear warmup over WARMUP of the steps, then a cosine decay to 0 at the last step"
    warmup = max(1, int(WARMUP * steps))
    return lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / max(1, steps - warmup)))

def held_out(task: Task, model: nn.Module, opt, entry: Entry, split: str) -> float:
    "The loss on `split`, at the averaged weights x for Schedule-Free (its eval mode)"
    if entry.schedule_free: opt.eval()
    with torch.no_grad(): loss = task.held_out(model, split).item()
    if entry.schedule_free: opt.train()
    return loss if math.isfinite(loss) else math.inf

def train(task: Task, entry: Entry, lr: float, seed: int, split: str, points: int = 0) -> dict:
    "Train from `seed`: the final loss on `split`, its values at `points` evenly spaced steps, the training losses, the seconds taken"
    model, start = task.model(seed), time.perf_counter()
    opt = entry.make(model, lr, task.steps)
    scheduler = None if entry.schedule_free else torch.optim.lr_scheduler.LambdaLR(opt, warmup_cosine(task.steps))
    curve, losses, every = [], [], task.steps // points if points else 0
    for step in range(task.steps):
        loss = task.loss(model, step, seed)
        losses.append(loss.item())
        if not math.isfinite(losses[-1]): return dict(loss=math.inf, curve=curve, train=losses, seconds=time.perf_counter() - start)
        loss.backward(); opt.step(); opt.zero_grad()
        if scheduler: scheduler.step()
        if every and (step + 1) % every == 0: curve.append(held_out(task, model, opt, entry, split))
    return dict(loss=held_out(task, model, opt, entry, split), curve=curve, train=losses, seconds=time.perf_counter() - start)

def step_times(task: Task, entries: dict[str, Entry], lrs: dict[str, float], rounds: int) -> dict[str, dict[str, float]]:
    "Median CPU ms of a whole training step and of opt.step() alone, the optimizers' steps interleaved round by round; state bytes"
    runs = {}
    for name, entry in entries.items():
        model = task.model(0); opt = entry.make(model, lrs[name], task.steps)
        for step in range(3): task.loss(model, step, 0).backward(); opt.step(); opt.zero_grad()  # the state exists
        runs[name] = (model, opt)
    times, names = {name: ([], []) for name in entries}, list(entries)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            model, opt = runs[name]
            t0 = time.process_time(); task.loss(model, r, 0).backward()  # CPU time: a shared machine's waits left out
            t1 = time.process_time(); opt.step(); t2 = time.process_time(); opt.zero_grad()
            times[name][0].append(t2 - t0); times[name][1].append(t2 - t1)
    n = {name: sum(p.numel() for p in model.parameters()) for name, (model, _) in runs.items()}
    state = {name: sum(t.nbytes for s in opt.state.values() for t in s.values() if torch.is_tensor(t)) for name, (_, opt) in runs.items()}
    return {name: dict(step_ms=1e3 * statistics.median(times[name][0]), opt_ms=1e3 * statistics.median(times[name][1]),
                       state_bytes_per_param=state[name] / n[name]) for name in entries}

def tune(task: Task, entry: Entry) -> dict[float, dict]:
    "Validation runs on the tuning seed over the grid around the optimizer's centre, extended by up to EXTENSIONS steps of x3 while the best is at an edge"
    lrs = [entry.centre * g for g in GRID]
    grid = {lr: train(task, entry, lr, TUNING_SEED, "validation") for lr in lrs}
    for _ in range(EXTENSIONS):
        best, step = min(grid, key=lambda lr: grid[lr]["loss"]), GRID[1] / GRID[0]
        if best not in (min(grid), max(grid)) or math.isinf(grid[best]["loss"]): break
        lr = best * step if best == max(grid) else best / step
        grid[lr] = train(task, entry, lr, TUNING_SEED, "validation")
    return grid

def run_task(task: Task, entries: dict[str, Entry], log: Callable = print) -> dict:
    "Tune each optimizer's lr on the tuning seed, train the best on SEEDS, and time the steps: the task's part of the JSON"
    results = {}
    for name, entry in entries.items():
        grid = tune(task, entry)
        best = min(grid, key=lambda lr: grid[lr]["loss"])
        reported = [train(task, entry, best, seed, "test", points=POINTS) for seed in SEEDS]
        results[name] = dict(grid={f"{lr:.3g}": r["loss"] for lr, r in sorted(grid.items())}, best_lr=best,
                             edge=best in (min(grid), max(grid)), test=[r["loss"] for r in reported], curves=[r["curve"] for r in reported],
                             seconds_per_run=statistics.mean(r["seconds"] for r in list(grid.values()) + reported))
        log(f"  {name:<20} lr {best:.3g}{' (grid edge)' if results[name]['edge'] else ''}: test "
            + " ".join(f"{l:.4f}" for l in results[name]["test"]) + f"  ({results[name]['seconds_per_run']:.2f} s a run)")
    for name, t in step_times(task, entries, {n: r["best_lr"] for n, r in results.items()}, rounds=ROUNDS).items(): results[name] |= t
    return dict(what=task.what, steps=task.steps, params=sum(p.numel() for p in task.model(0).parameters()), optimizers=results)

def longer(task: Task, entry: Entry, lr: float, factors: tuple[float, ...]) -> dict[int, dict]:
    "The optimizer trained `factor` times as many steps, its lr re-tuned over lr/3, lr, 3lr on the tuning seed: the test losses"
    results = {}
    for factor in factors:
        long = dataclasses.replace(task, steps=int(factor * task.steps))
        grid = {g * lr: train(long, entry, g * lr, TUNING_SEED, "validation")["loss"] for g in (1 / 3, 1, 3)}
        best = min(grid, key=grid.get)
        results[long.steps] = dict(best_lr=best, test=[train(long, entry, best, seed, "test")["loss"] for seed in SEEDS])
    return results

def rounded(value, digits: int = 5):
    "`value` with every float rounded to `digits` significant digits, in nested dicts and lists too"
    if isinstance(value, dict): return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list): return [rounded(v, digits) for v in value]
    return float(f"{value:.{digits}g}") if isinstance(value, float) and math.isfinite(value) else value

def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke test: 20 steps per task, one seed, a three-point grid")
    parser.add_argument("--json", default=None, help="where to write the results (default: nbs/shootout.json, not written with --quick)")
    parser.add_argument("--optimizers", nargs="*", default=None, help="only these optimizers (default: every one available)")
    args = parser.parse_args(argv)
    global GRID, SEEDS, POINTS, ROUNDS, EXTENSIONS
    torch.set_num_threads(1)
    entries = {n: e for n, e in available().items() if args.optimizers is None or n in args.optimizers}
    tasks = dict(TASKS)
    if args.quick:
        GRID, SEEDS, POINTS, ROUNDS, EXTENSIONS = (1 / 3, 1, 3), (1,), 2, 3, 0
        tasks = {name: dataclasses.replace(t, steps=20) for name, t in TASKS.items()}
    start, cpu_start, out = time.perf_counter(), time.process_time(), dict(tasks={})
    for name, task in tasks.items():
        print(f"{name}: {task.what}, {task.steps} steps", flush=True)
        out["tasks"][name] = run_task(task, entries, log=lambda s: print(s, flush=True))
    if "AdamW" in entries:  # how many more steps AdamW needs on the transformer, where the matrix optimizers lead
        out["longer"] = {"transformer, AdamW": longer(tasks["transformer"], entries["AdamW"],
                         out["tasks"]["transformer"]["optimizers"]["AdamW"]["best_lr"], (2,) if args.quick else (1.5, 2, 3))}
    out["config"] = dict(weight_decay=WEIGHT_DECAY, warmup=WARMUP, grid=list(GRID), extensions=EXTENSIONS, tuning_seed=TUNING_SEED, seeds=list(SEEDS),
                         torch=torch.__version__, threads=torch.get_num_threads(), minutes=(time.perf_counter() - start) / 60,
                         cpu_minutes=(time.process_time() - cpu_start) / 60,
                         optimizers={n: dict(centre=e.centre, schedule_free=e.schedule_free, options=e.options) for n, e in entries.items()})
    print(f"{out['config']['minutes']:.1f} minutes, {out['config']['cpu_minutes']:.1f} of them on the CPU")
    path = args.json or (None if args.quick else Path(__file__).resolve().parent.parent / "nbs" / "shootout.json")
    if path: Path(path).write_text(json.dumps(rounded(out), indent=1) + "\n")
    return out

if __name__ == "__main__": main(sys.argv[1:])
