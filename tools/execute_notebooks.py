"""Run notebooks top to bottom and store their outputs in place, for the docs site, then clean them with nbdev_clean.

Cells flagged with a `tst_flags` flag (`#| cuda`, `#| slow`) are not run unless enabled with --flags, so their stored
outputs, if any, stay as they were. Usage: python tools/execute_notebooks.py [--flags "cuda slow"] [nbs/10_sgd.ipynb ...]"""
import argparse
from pathlib import Path
from execnb.nbio import read_nb, write_nb
from execnb.shell import CaptureShell
from fastcore.foundation import working_directory
from nbdev.clean import nbdev_clean
from nbdev.config import get_config
from nbdev.doclinks import nbglob
from nbdev.process import NBProcessor
from nbdev.processors import FrontmatterProc


def execute(path: Path, enabled: set[str]) -> None:
    "Run the notebook at `path` in a fresh shell and save its outputs"
    skipped = set(get_config().tst_flags.split()) - enabled
    nb = NBProcessor(path, procs=FrontmatterProc, process=True).nb  # parses the `#|` directives of each cell
    def skip(cell):
        return cell.cell_type != "code" or "nbdev_export(" in cell.source or bool(skipped & (cell.directives_ or {}).keys())
    try:
        with working_directory(path.parent): CaptureShell(path).run_all(nb, exc_stop=True, preproc=skip)
    finally:  # a failing cell's notebook is saved too, up to and with its error, so that what it printed is not lost
        stored = read_nb(path)
        for cell, ran in zip(stored.cells, nb.cells):
            if cell.cell_type == "code" and not skip(ran): cell.outputs, cell.execution_count = ran.outputs, ran.execution_count
        write_nb(stored, path)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="notebooks to run; default: all of them")
    parser.add_argument("--flags", default="", help="tst_flags to enable, e.g. 'cuda slow'")
    args = parser.parse_args()
    paths = [Path(p) for p in args.notebooks] or sorted(nbglob(get_config().nbs_path, func=Path), key=lambda p: p.name)
    for path in paths:
        print(f"running {path}"); execute(path.resolve(), set(args.flags.split()))
    nbdev_clean.__wrapped__()  # the undecorated function: the decorated one would parse our command line
