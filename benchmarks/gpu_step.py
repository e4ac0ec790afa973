"""Issue #40's GPU tables, side by side in one process, and every GPU path checked against the CPU.

- bandwidth: one AdamW step of 8 matrices of 8192 x 8192 (537M parameters) in each storage, set against its floor, the
  bytes the step must move per parameter over the bandwidth of a device-to-device copy timed in the same rounds;
- gpt2: one AdamW step of GPT-2 small's 148 tensors (124M parameters): GPU time, and the host's time until the call returns;
- train: a whole bf16 training step of a GPT (8 blocks, d = 1024, vocabulary 32k, batch 4 x 512), with and without
  gradient release: step time; bytes per parameter resident between steps (weights and states), at the step's peak, and
  still allocated after the model and optimizer are deleted; `leftover.txt` names the allocations of the last kind;
- check: every element-wise optimizer in every storage, foreach and compiled, five steps on the GPU against the CPU;
- profile: cProfile of the compiled step on GPT-2 small's tensors, and of the training step with int8 gradient release
  (`profile.txt`): where the host's time goes.

Every row updates its own copy of the tensors; rows are interleaved in a rotating order, timed with CUDA events, and each
figure is the median over the rounds. Peers (torch-optimi, FlashOptim, bitsandbytes, torchao) are imported where present
(`bash benchmarks/gpu_peers.sh DIR` unpacks them for a GPU machine without network); a missing or failing one gives its row as
the error. `--record` stores the figures in nbs/measured.json, section `gpu_step`, beside those of an earlier run on the
same GPU: a step table by storage (the storages run replace theirs, each with its command), any other table whole.
`--small` shrinks every size so that the script runs on a CPU in a minute or two (a smoke test, never recorded).

    PYTHONPATH=DIR python3 benchmarks/gpu_step.py [--tables bandwidth gpt2 profile train check] [--rounds 20] [--record] [--out DIR]

On an H200 (torch 2.11) the tables took, mostly compiling: bandwidth 55 s, profile 111 s in a process of its own, one
training row about 25 s; all of them take longer than one 10-minute call. `bash benchmarks/gpu_lease.sh OUT` runs them
in order of importance within one call's budget (each call's --record adds its tables to those stored from the same GPU).
"""
import argparse, datetime, gc, json, platform, shlex, statistics, sys, time, warnings
from pathlib import Path
import torch
import torch.nn.functional as F
from torch import nn
sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parent.parent)]
import optimi_nb
from optimi_nb import prepare_for_gradient_release
from benchmark import gpt2_small

ROOT = Path(__file__).resolve().parent.parent
INT8 = dict(state_precision="int8", kahan_precision="int8")
INT4 = dict(state_precision="int4", kahan_precision="int8")
FLOOR_BYTES = {"fp32": 28, "bf16 + Kahan": 18, "int8 states + int8 residual": 12, "int4 states + int8 residual": 10}
DEV = "cuda" if torch.cuda.is_available() else "cpu"
SMALL = False
ROW_FILTER = None  # --rows

def chosen(label: str) -> bool:
    "Whether --rows keeps the row `label`"
    return ROW_FILTER is None or any(part in label for part in ROW_FILTER)


def sync():
    if DEV == "cuda": torch.cuda.synchronize()

def timed(fn) -> tuple[float, float]:
    "Milliseconds of one call of `fn`: between CUDA events (else wall clock), and the host's until the call returns"
    if DEV != "cuda":
        t0 = time.perf_counter(); fn(); t = (time.perf_counter() - t0) * 1e3; return t, t
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    sync(); start.record(); t0 = time.perf_counter(); fn(); host = (time.perf_counter() - t0) * 1e3
    end.record(); end.synchronize()
    return start.elapsed_time(end), host

def interleaved(rows: dict, rounds: int, warm: int = 3) -> dict:
    "Median (ms, host ms) of each row's step over `rounds` rounds in a rotating order, after `warm` calls each"
    for fn in rows.values():
        for _ in range(warm): fn()
    names, times = list(rows), {name: [] for name in rows}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]: times[name].append(timed(rows[name]))
    return {n: tuple(round(statistics.median(t[i] for t in ts), 3) for i in (0, 1)) for n, ts in times.items()}


def params_with_grads(shapes, dtype, seed: int = 0) -> list[torch.Tensor]:
    "Parameters of `shapes` on the device, with gradients, the same for every row"
    gen = torch.Generator(DEV).manual_seed(seed)
    params = [torch.randn(s, device=DEV, generator=gen).to(dtype).requires_grad_() for s in shapes]
    for p in params: p.grad = (torch.randn(p.shape, device=DEV, generator=gen) * 1e-2).to(dtype)
    return params

def peer(name: str, attr: str):
    "The optimizer class `attr` of the peer package `name`, imported on demand"
    module = __import__(name, fromlist=[attr.split(".")[0]])
    for part in attr.split("."): module = getattr(module, part)
    return module

# Each row: (label, storage, dtype, constructor of the optimizer from a list of params)
OURS = lambda **o: lambda ps: optimi_nb.AdamW(ps, lr=1e-3, **o)
def uncaptured(make):
    "A row of ours whose steps are never recorded as CUDA graphs (chapter Step graphs): the host's work as before"
    def build(ps):
        opt = make(ps); opt.capture_steps = False; return opt
    return build
def through_dynamo(make):
    "An uncaptured row of ours whose compiled updates go through torch.compile, not compiled calls: the host's work before"
    def build(ps):
        opt = uncaptured(make)(ps); opt.direct_calls = False; return opt
    return build
ROWS = {
    "fp32": [("optimi_nb compiled", OURS(compiled=True)), ("optimi_nb compiled, uncaptured", uncaptured(OURS(compiled=True))),
             ("optimi_nb compiled, uncaptured, through torch.compile", through_dynamo(OURS(compiled=True))),
             ("torch fused", lambda ps: torch.optim.AdamW(ps, 1e-3, fused=True)),
             ("torch-optimi Triton", lambda ps: peer("optimi", "AdamW")(ps, lr=1e-3, triton=True))],
    "bf16 + Kahan": [("optimi_nb compiled", OURS(compiled=True)),
                     ("optimi_nb compiled, uncaptured", uncaptured(OURS(compiled=True))),
                     ("torch-optimi Triton", lambda ps: peer("optimi", "AdamW")(ps, lr=1e-3, triton=True)),
                     ("torch fused bf16, no Kahan", lambda ps: torch.optim.AdamW(ps, 1e-3, fused=True))],
    "int8 states + int8 residual": [
        ("optimi_nb compiled", OURS(compiled=True, **INT8)),
        ("optimi_nb compiled, uncaptured", uncaptured(OURS(compiled=True, **INT8))),
        ("optimi_nb foreach", OURS(compiled=False, **INT8)),
        ("FlashOptim FlashAdamW", lambda ps: peer("flashoptim", "FlashAdamW")(ps, lr=1e-3, master_weight_bits=24)),
        ("bitsandbytes AdamW8bit", lambda ps: peer("bitsandbytes", "optim.AdamW8bit")(ps, lr=1e-3)),
        ("torchao AdamW8bit", lambda ps: peer("torchao", "optim.AdamW8bit")(ps, lr=1e-3))],
    "int4 states + int8 residual": [("optimi_nb compiled", OURS(compiled=True, **INT4)), ("optimi_nb foreach", OURS(compiled=False, **INT4)),
                                    ("torchao AdamW4bit", lambda ps: peer("torchao", "optim.AdamW4bit")(ps, lr=1e-3))]}


def copy_step(numel: int):
    "A device-to-device copy of `numel` fp32 elements (8 bytes each, read and written): the bandwidth"
    src, dst = torch.randn(numel, device=DEV), torch.empty(numel, device=DEV)
    return lambda: dst.copy_(src)

def step_table(shapes, rounds: int) -> dict:
    "Each storage's rows on `shapes`, interleaved with a copy of as many elements; ms, host ms and share of the floor"
    numel, out = sum(torch.Size(s).numel() for s in shapes), {}
    for storage, rows in ROWS.items():
        dtype = torch.float32 if storage == "fp32" else torch.bfloat16
        if not any(chosen(f"{storage}: {label}") for label, _ in rows): continue
        steppers, errors = {"copy": copy_step(numel)}, {}
        for label, make in rows:
            if not chosen(f"{storage}: {label}"): continue
            try:
                opt = make(params_with_grads(shapes, dtype)); steppers[label] = opt.step; opt.step()
            except Exception as e: errors[label] = f"{type(e).__name__}: {str(e)[:160]}"
        try: medians = interleaved(steppers, rounds)
        except Exception as e: medians, errors["all"] = {}, f"{type(e).__name__}: {str(e)[:300]}"
        copy_ms = medians.pop("copy", (float("nan"),))[0]
        floor_ms = copy_ms * FLOOR_BYTES[storage] / 8
        out[storage] = dict(floor_ms=round(floor_ms, 3), bandwidth_TBps=round(numel * 8 / copy_ms / 1e9, 2),
                            rows={k: dict(ms=ms, host_ms=h, of_floor=round(floor_ms / ms, 2)) for k, (ms, h) in medians.items()},
                            errors=errors)
        print(storage, json.dumps(out[storage]), flush=True)
        del steppers; gc.collect(); torch.cuda.empty_cache() if DEV == "cuda" else None
    return out


class Block(nn.Module):
    "Pre-norm transformer block: causal self-attention (PyTorch's fused attention), then a GELU MLP of width 4d"
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads, self.norm1, self.qkv, self.proj = heads, nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.norm2, self.up, self.down = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, T, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, D))
        return x + self.down(F.gelu(self.up(self.norm2(x))))

class GPT(nn.Module):
    "Token and position embeddings, `n` blocks, a final norm and an untied head; forward returns the mean loss"
    def __init__(self, n: int, d: int, vocab: int, context: int):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks, self.norm, self.head = nn.Sequential(*[Block(d, d // 64) for _ in range(n)]), nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
    def forward(self, x, y):
        h = self.blocks(self.tok(x) + self.pos(torch.arange(x.shape[1], device=x.device)))
        return F.cross_entropy(self.head(self.norm(h)).float().flatten(0, 1), y.flatten())

def gpt_size(): return (2, 128, 1024, 64, 2) if SMALL else (8, 1024, 32768, 512, 4)  # blocks, d, vocab, context, batch

def flash_release(model, opt): return peer("flashoptim", "enable_gradient_release")(model, opt)
def ours_release(model, opt): prepare_for_gradient_release(model, opt)
TRAIN_ROWS = [  # label, optimizer, gradient release (None: step and zero_grad after backward)
    ("torch fused AdamW (bf16 states)", lambda ps: torch.optim.AdamW(ps, 1e-3, fused=True), None),
    ("FlashOptim, gradient release", lambda ps: peer("flashoptim", "FlashAdamW")(ps, lr=1e-3, master_weight_bits=24), flash_release),
    ("optimi_nb int8 compiled, gradient release", OURS(compiled=True, gradient_release=True, **INT8), ours_release),
    ("optimi_nb int8 compiled, gradient release, uncaptured",
     uncaptured(OURS(compiled=True, gradient_release=True, **INT8)), ours_release),
    ("optimi_nb int8 compiled, gradient release, uncaptured, through torch.compile",
     through_dynamo(OURS(compiled=True, gradient_release=True, **INT8)), ours_release),
    ("optimi_nb bf16 + Kahan compiled, gradient release", OURS(compiled=True, gradient_release=True), ours_release),
    ("optimi_nb int4 compiled, gradient release", OURS(compiled=True, gradient_release=True, **INT4), ours_release),
    ("FlashOptim, no release", lambda ps: peer("flashoptim", "FlashAdamW")(ps, lr=1e-3, master_weight_bits=24), None),
    ("optimi_nb int8 compiled, no release", OURS(compiled=True, **INT8), None),
    ("optimi_nb bf16 + Kahan compiled, no release", OURS(compiled=True), None)]

def allocated() -> int:
    gc.collect(); sync(); return torch.cuda.memory_allocated() if DEV == "cuda" else 0

def training(make, release):
    "The training table's bf16 model, its optimizer from `make`, with `release` set up, and its step"
    n_blocks, d, vocab, context, batch = gpt_size()
    torch.manual_seed(0)
    model = GPT(n_blocks, d, vocab, context).to(DEV, torch.bfloat16)
    gen = torch.Generator(DEV).manual_seed(1)
    x, y = (torch.randint(0, vocab, (batch, context), device=DEV, generator=gen) for _ in range(2))
    opt = make(list(model.parameters()))
    if release: release(model, opt)  # the hooks step and free each gradient in backward
    def step():
        model(x, y).backward()
        if not release: opt.step(); opt.zero_grad(set_to_none=True)
    return model, step

def stepped(make, release, steps: int, warm: int, before: int) -> dict:
    "Build a row's model and optimizer, step them, and return its figures; all it built goes when it returns"
    model, step = training(make, release)
    for _ in range(warm): step()
    resident = allocated() - before
    if DEV == "cuda": torch.cuda.reset_peak_memory_stats()
    ms = statistics.median(timed(step)[0] for _ in range(steps))
    peak = torch.cuda.max_memory_allocated() - before if DEV == "cuda" else 0
    return dict(ms=ms, resident=resident, peak=peak, params=sum(p.numel() for p in model.parameters()))

def train_row(make, release, steps: int, warm: int = 3) -> dict:
    "One row of the training table: bytes per parameter resident, at the peak, and left once its objects are gone"
    before = allocated()
    r = stepped(make, release, steps, warm, before)
    left, n = allocated() - before, r["params"]
    return dict(ms=round(r["ms"], 2), resident=round(r["resident"] / n, 2), peak=round(r["peak"] / n, 2),
                left_after_delete=round(left / n, 3), params=n)

def leftover_report(path: Path) -> dict:
    "Build, step and delete the first optimi_nb release row with the allocator's history on; name what stays allocated"
    if DEV != "cuda": return {}
    before = allocated()
    torch.cuda.memory._record_memory_history(max_entries=500_000)
    label, make, release = TRAIN_ROWS[2]
    train_row(make, release, steps=2, warm=1)
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    blocks = [b for s in snapshot["segments"] for b in s["blocks"] if b["state"] == "active_allocated"]
    lines = [f"{label}: {allocated() - before} bytes allocated after deleting it; {len(blocks)} live blocks in all"]
    for b in sorted(blocks, key=lambda b: -b["size"])[:25]:
        frames = [f"{f['filename'].split('site-packages/')[-1]}:{f['line']} {f['name']}" for f in b.get("frames", [])
                  if f["filename"].endswith(".py")][:8]
        lines += [f"{b['size']:>12} bytes"] + [f"    {f}" for f in frames]
    path.write_text("\n".join(lines) + "\n")
    return dict(bytes_left=allocated() - before, live_blocks=len(blocks))

def train_table(steps: int, out: Path) -> dict:
    "The training step's rows in the issue's order, each built and deleted in turn; then the leftover trace"
    result = {}
    for label, make, release in TRAIN_ROWS:
        if not chosen(label): continue
        try: result[label] = train_row(make, release, steps)
        except Exception as e: result[label] = dict(error=f"{type(e).__name__}: {str(e)[:200]}")
        print(label, result[label], flush=True)
    if ROW_FILTER is not None: return result  # the trace builds a row of its own
    try: result["leftover trace"] = leftover_report(out / "leftover.txt")
    except Exception as e: result["leftover trace"] = dict(error=f"{type(e).__name__}: {str(e)[:200]}")
    return result


def profile_table(out: Path) -> dict:
    "cProfile of 20 compiled AdamW steps on GPT-2 small's tensors (fp32, and int8 + residual): where the host's time goes"
    import cProfile, io, pstats
    shapes, result, text = [tuple(max(1, s // 16) for s in t) for t in gpt2_small()] if SMALL else gpt2_small(), {}, []
    for label, options, dtype in (("fp32", {}, torch.float32), ("int8 states + int8 residual", INT8, torch.bfloat16)):
        if not chosen(label): continue
        opt = optimi_nb.AdamW(params_with_grads(shapes, dtype), lr=1e-3, compiled=True, **options)
        for _ in range(3): opt.step()
        sync(); profiler = cProfile.Profile(); t0 = time.perf_counter()
        profiler.enable()
        for _ in range(20): opt.step()
        profiler.disable(); result[label] = dict(host_ms=round((time.perf_counter() - t0) * 1e3 / 20, 3)); sync()
        stream = io.StringIO(); pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(25)
        text += [f"== {label}: {result[label]['host_ms']} ms of host time per step (profiled)", stream.getvalue()]
        del opt
    for label, make, release in TRAIN_ROWS[1:3]:  # FlashOptim's and ours with int8 gradient release
        if not chosen(label): continue
        try: result[label], report = training_profile(label, make, release)
        except Exception as e: result[label], report = dict(error=f"{type(e).__name__}: {str(e)[:200]}"), ""
        text.append(report)
    (out / "profile.txt").write_text("\n".join(text))
    return result

def training_profile(label: str, make, release) -> tuple[dict, str]:
    "The training step of a train table's row: its times, and a report: cProfile of the host's work, the GPU's kernels"
    import cProfile, io, pstats
    _, step = training(make, release)
    for _ in range(3): step()
    sync(); profiler = cProfile.Profile(); t0 = time.perf_counter()
    profiler.enable()
    for _ in range(5): step()
    profiler.disable(); host = (time.perf_counter() - t0) * 1e3 / 5; sync()
    ms = (time.perf_counter() - t0) * 1e3 / 5
    stream = io.StringIO(); pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(30)
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if DEV == "cuda" else [])
    with torch.profiler.profile(activities=activities) as kernels:
        for _ in range(3): step()
        sync()
    by = "cuda_time_total" if DEV == "cuda" else "cpu_time_total"
    report = "\n".join([f"== {label}: {host:.3f} ms of host time per step, {ms:.3f} ms in all (cProfiled)",
                         stream.getvalue(), f"== {label}: torch.profiler, 3 steps", kernels.key_averages().table(
                             sort_by=by, row_limit=25, max_name_column_width=70)])
    return dict(host_ms=round(host, 3), ms=round(ms, 3)), report


CHECKED = dict(SGD=dict(momentum=0.9), Adam={}, AdamW={}, RAdam={}, Lion={}, Adan={}, Ranger={}, StableAdamW={})
STORAGES = {"fp32": (torch.float32, {}), "bf16 + Kahan": (torch.bfloat16, {}), "int8": (torch.bfloat16, INT8),
            "int4": (torch.bfloat16, INT4)}

def run_steps(name: str, options: dict, dtype, device: str, compiled: bool) -> list[torch.Tensor]:
    "Five steps of optimizer `name` on three fixed tensors (a partial last block among them), on `device`"
    gen = torch.Generator().manual_seed(0)
    shapes = [(256, 300), (300,), (5000,)]
    params = [torch.randn(s, generator=gen).to(device, dtype).requires_grad_() for s in shapes]
    opt = getattr(optimi_nb, name)(params, lr=1e-2, compiled=compiled, **CHECKED[name], **options)
    for _ in range(5):
        for p in params: p.grad = (torch.randn(p.shape, generator=gen) * 0.1).to(device, dtype)
        opt.step()
    return [p.detach().cpu().float() for p in params]

def check_table() -> dict:
    "Each path on the GPU against foreach on the CPU: largest difference in last places at the weights' RMS, share that differs"
    result = {}
    for name in CHECKED:
        for storage, (dtype, options) in STORAGES.items():
            for compiled in (False, True):
                key = f"{name}, {storage}, {'compiled' if compiled else 'foreach'}"
                try:
                    cpu, gpu = run_steps(name, options, dtype, "cpu", False), run_steps(name, options, dtype, DEV, compiled)
                    ulp = [c.pow(2).mean().sqrt() * (2 ** -7 if dtype == torch.bfloat16 else 2 ** -23) for c in cpu]
                    ulps = max(((g - c).abs() / u).max().item() for g, c, u in zip(gpu, cpu, ulp))
                    share = sum((g != c).sum().item() for g, c in zip(gpu, cpu)) / sum(c.numel() for c in cpu)
                    result[key] = dict(max_ulps=round(ulps, 2), differing=round(share, 4))
                except Exception as e: result[key] = dict(error=f"{type(e).__name__}: {str(e)[:160]}")
                print(f"  {key}: {result[key]}", flush=True)  # row by row: a run cut short still tells
    worst = max(result, key=lambda k: result[k].get("max_ulps", float("inf")))
    print(f"check: {len(result)} configurations; largest difference {result[worst]} ({worst})", flush=True)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="*", default=["bandwidth", "gpt2", "profile", "train", "check"])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--record", action="store_true", help="store the figures in nbs/measured.json, section gpu_step")
    parser.add_argument("--small", action="store_true", help="every size shrunk: a smoke test that runs on a CPU")
    parser.add_argument("--out", default=".", help="folder for leftover.txt")
    parser.add_argument("--rows", nargs="*", help="only the rows whose label holds one of these (default: all); a step table's label reads 'storage: row'")
    args = parser.parse_args()
    global SMALL, ROW_FILTER; SMALL, ROW_FILTER = args.small, args.rows
    warnings.filterwarnings("ignore")
    device = torch.cuda.get_device_name() if DEV == "cuda" else "cpu"
    print(f"{device}, torch {torch.__version__}, Python {platform.python_version()}", flush=True)
    result = dict(device=device, torch=torch.__version__, command="python3 " + shlex.join(sys.argv),
                  date=datetime.date.today().isoformat())
    side = 256 if SMALL else 8192
    tables = dict(bandwidth=lambda: step_table([(side, side)] * 8, args.rounds),
                  gpt2=lambda: step_table([tuple(max(1, s // 16) for s in t) for t in gpt2_small()] if SMALL else gpt2_small(),
                                          args.rounds),
                  train=lambda: train_table(3 if SMALL else 10, Path(args.out)), check=check_table,
                  profile=lambda: profile_table(Path(args.out)))
    for name in args.tables:
        t0 = time.perf_counter(); result[name] = tables[name](); print(f"== {name}: {time.perf_counter() - t0:.0f} s", flush=True)
        save(result, args.tables, Path(args.out), args.record and not SMALL)  # after each table: a run cut short keeps them

STEP_TABLES = ("bandwidth", "gpt2")  # tables of `step_table`, one entry per storage

def save(result: dict, tables: list, out: Path, record: bool):
    "Write the figures so far to `out`, and with `record` into nbs/measured.json's section gpu_step"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"gpu_step_{'_'.join(tables)}.json").write_text(json.dumps(result, indent=1) + "\n")
    if not record: return
    path = ROOT / "nbs" / "measured.json"
    measured = json.loads(path.read_text())
    if measured.get("gpu_step", {}).get("device") != result["device"]: measured["gpu_step"] = {}
    stored, source = measured["gpu_step"], {"command": result["command"], "date": result["date"]}
    stored.update(device=result["device"], torch=result["torch"])
    for name, table in result.items():  # the tables of this run; those of an earlier run on the same GPU stay
        if name in STEP_TABLES:  # by storage: a storage's rows and floor from one run (--rows may run a few storages)
            stored.setdefault(name, {}).update({k: t | source for k, t in table.items()})
        elif name not in ("device", "torch", "command", "date"):  # a training table's rows are compared with each other: all from one run
            stored[name] = table; stored.setdefault("sources", {})[name] = source
    path.write_text(json.dumps(measured, indent=1, ensure_ascii=False) + "\n")

if __name__ == "__main__": main()
