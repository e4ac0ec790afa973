"""Run notebooks on a CUDA machine and store the outputs of their `#| cuda` cells only, then clean them with nbdev_clean.

Each notebook runs top to bottom with the `cuda` flag enabled, in a temporary copy beside it (so relative paths work), and
only the `#| cuda` cells' outputs are copied back: the other cells keep the outputs stored from the machine the chapter's
prose describes. Without arguments, every notebook that has a `#| cuda` cell. Usage:

    python tools/store_cuda_outputs.py [nbs/34_low_precision.ipynb ...]
"""
import argparse, sys, traceback
from pathlib import Path
from execnb.nbio import read_nb, write_nb
from nbdev.clean import nbdev_clean
from nbdev.config import get_config
from nbdev.doclinks import nbglob
from nbdev.process import NBProcessor
from nbdev.processors import FrontmatterProc

sys.path.insert(0, str(Path(__file__).parent))
from execute_notebooks import execute


def cuda_cells(path: Path) -> list[int]:
    "Indices of the `#| cuda` cells of the notebook at `path`"
    nb = NBProcessor(path, procs=FrontmatterProc, process=True).nb
    return [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and "cuda" in (cell.directives_ or {})]


def output_text(output) -> str:
    "The text of one stored cell output: a stream's, a result's plain form, or an error's name and value"
    text = output.get("text") or output.get("data", {}).get("text/plain") or [f"{output.get('ename')}: {output.get('evalue')}"]
    return "".join(text) if isinstance(text, list) else text


def store(path: Path) -> int:
    "Run a copy of the notebook at `path` with `cuda` enabled, copy its `#| cuda` cells' outputs into `path`; return their number"
    cells = cuda_cells(path)
    if not cells: return 0
    copy = path.with_name(f"_cuda_run_{path.name}")  # a leading _ keeps nbdev's globbing (export, tests) away from it
    copy.write_bytes(path.read_bytes())
    try:
        try: execute(copy, {"cuda"})
        except Exception:  # print what the GPU cells printed before the failure: the machine and its outputs are gone after
            for i in cells: print(f"--- cell {i}:", *map(output_text, read_nb(copy).cells[i].outputs), sep="\n", flush=True)
            raise
        ran, stored = read_nb(copy), read_nb(path)
        assert len(ran.cells) == len(stored.cells), f"{path} changed while it ran"
        for i in cells: stored.cells[i].outputs, stored.cells[i].execution_count = ran.cells[i].outputs, ran.cells[i].execution_count
        write_nb(stored, path)
    finally: copy.unlink(missing_ok=True)
    nbdev_clean.__wrapped__(fname=str(path))
    return len(cells)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to run; default: every notebook with a #| cuda cell")
    args = parser.parse_args()
    import torch
    if not torch.cuda.is_available(): sys.exit(f"store_cuda_outputs: no CUDA GPU visible to torch {torch.__version__}; nothing run")
    paths = [Path(p).resolve() for p in args.notebooks] or [p for p in sorted(nbglob(get_config().nbs_path, func=Path), key=lambda p: p.name) if cuda_cells(p)]
    failed = []
    for path in paths:
        print(f"running {path.name}", flush=True)
        try: print(f"  stored the outputs of {store(path)} #| cuda cell(s)", flush=True)
        except Exception:
            traceback.print_exc(); failed.append(path.name)
    if failed: sys.exit(f"store_cuda_outputs: failed in {', '.join(failed)} (their stored outputs are unchanged)")
