"""4-bit states encoded by byte pairs or in block order (nbs/03a_codecs.ipynb, "Four bits"): one AdamW step of each.

    python3 benchmarks/pairs_4bit.py [--device cuda] [--rounds 3] [--steps 7] [--shape 4096 1024] [--tensors 3] [--record]

The two encoders give the same codes; how they walk a block decides what a compiled step fuses. Each round runs one
process per order (a compiled update is traced once per process, so the order cannot change within one), in turn;
each process times the compiled and the eager (foreach) step of AdamW on bf16 weights with 4-bit states and the int8
residual, medians over `--steps` steps after a warm-up, on one CPU thread. Prints each order's medians over the rounds
and their ratio (by pairs over in order); `--record` stores them in nbs/measured.json, section `pairs_4bit` (on a GPU
`pairs_4bit_cuda`)."""
import argparse, json, statistics, subprocess, sys, time
from pathlib import Path
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # optimi_nb from this checkout if not installed


def child(args) -> dict:
    "Median ms of a compiled and an eager step with the 4-bit encoders forced to `args.child`'s order"
    import optimi_nb, optimi_nb.codecs
    optimi_nb.codecs.by_byte_pairs = lambda x: args.child == "pairs"
    torch.set_num_threads(1)
    gen, times = torch.Generator().manual_seed(0), {}
    sync = torch.cuda.synchronize if args.device == "cuda" else lambda: None
    for compiled in (True, False):
        params = [torch.nn.Parameter(torch.randn(*args.shape, generator=gen).to(args.device, torch.bfloat16))
                  for _ in range(args.tensors)]
        for p in params: p.grad = torch.randn(p.shape, generator=gen).to(args.device, torch.bfloat16)
        opt = optimi_nb.AdamW(params, lr=1e-3, compiled=compiled, foreach=None if compiled else True,
                              state_precision="int4", kahan_precision="int8")
        for _ in range(3): opt.step()
        elapsed = []
        for _ in range(args.steps):
            sync(); start = time.perf_counter(); opt.step(); sync(); elapsed.append(time.perf_counter() - start)
        times["compiled" if compiled else "eager"] = statistics.median(elapsed) * 1e3
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=7)
    parser.add_argument("--shape", type=int, nargs=2, default=[4096, 1024])
    parser.add_argument("--tensors", type=int, default=3)
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--child", choices=["pairs", "order"])
    args = parser.parse_args()
    if args.child: print(json.dumps(child(args))); return
    runs = {"pairs": [], "order": []}
    for _ in range(args.rounds):
        for order in runs:
            out = subprocess.run([sys.executable, __file__, *sys.argv[1:], "--child", order], check=True,
                                 capture_output=True, text=True).stdout
            runs[order].append(json.loads(out.strip().splitlines()[-1]))
    print(f"AdamW, bf16 weights, 4-bit states + int8 residual, {args.tensors} × {tuple(args.shape)}, {args.device}, "
          f"medians over {args.rounds} rounds of {args.steps} steps")
    medians = {path: {order: statistics.median(r[path] for r in runs[order]) for order in runs}
               for path in ("compiled", "eager")}
    for path, ms in medians.items():
        print(f"  {path:9s} by byte pairs {ms['pairs']:8.2f} ms   in order {ms['order']:8.2f} ms   "
              f"pairs / order {ms['pairs'] / ms['order']:.2f}")
    if args.record:
        path = Path(__file__).resolve().parent.parent / "nbs" / "measured.json"
        measured = json.loads(path.read_text())
        command = " ".join(["python3 benchmarks/pairs_4bit.py", *(a for a in sys.argv[1:] if a != "--record")])
        measured["pairs_4bit" if args.device == "cpu" else "pairs_4bit_cuda"] = dict(
            command=command, torch=torch.__version__, step_ms=medians)
        path.write_text(json.dumps(measured, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
