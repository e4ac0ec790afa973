"""The Markdown that hidden-source cells of a notebook show (tables and sentences made from the stored measurements),
checked against what their source makes now: a stored output older than its source is a stale page and a stale README.

Usage: python3 tools/stale_outputs.py [--write] [NOTEBOOK ...]   (default: the index notebook, which README.md is made
from; --write stores the fresh outputs)"""
import argparse, contextlib, copy, sys
from pathlib import Path
from execnb.nbio import read_nb, write_nb
from execnb.shell import CaptureShell

ROOT = Path(__file__).resolve().parents[1]


def shown_markdown(cell) -> list[str]:
    "The Markdown outputs of a cell"
    outputs = cell.get("outputs", [])
    return ["".join(o["data"]["text/markdown"]) for o in outputs if "text/markdown" in o.get("data", {})]


def stale_markdown(path: Path, write: bool = False) -> list[str]:
    "Run the notebook `path` in its folder; name each cell whose stored Markdown output differs from the fresh one"
    nb = read_nb(path)
    stored = copy.deepcopy(nb.cells)
    with contextlib.chdir(path.parent): CaptureShell().run_all(nb, exc_stop=True)
    changed = lambda old, c: c.cell_type == "code" and shown_markdown(old) != shown_markdown(c)
    stale = [f"{path.name}: cell {i} ({c.get('id')}) shows Markdown older than its source; "
             "run tools/stale_outputs.py --write"
             for i, (old, c) in enumerate(zip(stored, nb.cells)) if changed(old, c)]
    if write and stale:
        for old, c in zip(stored, nb.cells):
            if c.cell_type == "code" and not changed(old, c): c.outputs = old.get("outputs", [])
        write_nb(nb, path)
    return stale


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", default=[str(ROOT / "nbs" / "index.ipynb")])
    parser.add_argument("--write", action="store_true", help="store the fresh Markdown outputs")
    args = parser.parse_args()
    problems = [p for nb in args.notebooks for p in stale_markdown(Path(nb).resolve(), args.write)]
    print("\n".join(problems) or "stale_outputs: none")
    sys.exit(1 if problems and not args.write else 0)
