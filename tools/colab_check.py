"""Run chapters as Google Colab would: in a fresh virtual environment with only PyTorch and a notebook runner, each
notebook alone in an empty folder, every cell top to bottom (flags such as `#| slow` and `#| cuda` mean nothing there),
its install cell (tools/colab.py) pointed at this checkout through OPTIMI_NB_SOURCE instead of the git URL. Figures
are drawn by matplotlib's inline backend, as in Colab, and a cell whose stored outputs hold a figure must make one again
(a GPU cell on a machine without a GPU excepted).

After each chapter, every package its install cell added is uninstalled, so no chapter passes on another's installs.
Slow: minutes per chapter on a CPU; not part of CI. Exit status 1 if any chapter fails.

Usage: python3 tools/colab_check.py [--venv /tmp/colab-venv] [--work /tmp/colab-run] [nbs/02_kahan.ipynb ...]"""
import argparse, json, os, shutil, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"  # the CPU wheel; the version Colab's runtime has or close to it
RUNNER = "nbclient ipykernel"
RUN_ONE = r"""
import re, sys, nbformat, torch
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
src, out, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
nb = nbformat.read(src, as_version=4)
# the cells whose stored outputs hold a figure, but for GPU cells on a machine without one (the install cell skips them)
IMAGE = ("image/png", "image/svg+xml", "image/jpeg")
draws = lambda cell: any(k in o.get("data", {}) for o in cell.get("outputs", []) for k in IMAGE)
gpu = lambda cell: re.search(r"^#\|\s*cuda\b", cell.source, re.M) and not torch.cuda.is_available()
figures = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and draws(c) and not gpu(c)]
client = NotebookClient(nb, timeout=timeout, kernel_name="colab-sim", resources={"metadata": {"path": str(__import__("pathlib").Path(src).parent)}})
try: client.execute()
except CellExecutionError as e:
    nbformat.write(nb, out); print(str(e)[-3000:]); sys.exit(1)
nbformat.write(nb, out)
blank = [i for i in figures if not draws(nb.cells[i])]
for i in blank: print(f"cell {i} drew no figure, where the stored notebook shows one:\n" + nb.cells[i].source[:300])
sys.exit(1 if blank else 0)
"""


def sh(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(args, check=True, **kw)


def make_venv(venv: Path) -> Path:
    "A virtual environment with only torch and the notebook runner (made once); return its python"
    py = venv / "bin" / "python"
    if not py.exists():
        sh(sys.executable, "-m", "venv", str(venv))
        sh(str(py), "-m", "pip", "install", "-q", TORCH, *RUNNER.split())
        sh(str(py), "-m", "ipykernel", "install", "--prefix", str(venv), "--name", "colab-sim", "--display-name", "Colab simulation")
    return py


def installed(py: Path) -> dict[str, str]:
    "Installed package -> version"
    out = subprocess.run([str(py), "-m", "pip", "list", "--format=json"], check=True, capture_output=True, text=True).stdout
    return {p["name"].lower(): p["version"] for p in json.loads(out)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="chapters to run; default: every nbs/*.ipynb but the index")
    parser.add_argument("--venv", default="/tmp/colab-venv", help="the virtual environment (made if missing)")
    parser.add_argument("--work", default="/tmp/colab-run", help="where each chapter runs, in a folder of its own")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds one cell may take")
    args = parser.parse_args()
    py = make_venv(Path(args.venv))
    base = installed(py)
    for mod in ("optimi_nb", "fastcore", "matplotlib", "nbdev"):
        if mod in base: sys.exit(f"{args.venv} is not fresh: it has {mod}; remove it and run again")
    paths = [Path(p).resolve() for p in args.notebooks] or sorted(p for p in (ROOT / "nbs").glob("*.ipynb") if p.name != "index.ipynb")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # matplotlib's inline backend, as in Colab and Jupyter, so a figure becomes an image output (agg would draw nothing)
    env |= {"OPTIMI_NB_SOURCE": str(ROOT), "PATH": f"{Path(args.venv) / 'bin'}:{env.get('PATH', '')}",
            "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    results = []
    for nb in paths:
        work = Path(args.work) / nb.stem
        shutil.rmtree(work, ignore_errors=True); work.mkdir(parents=True)
        shutil.copy(nb, work / nb.name)  # alone, as a notebook opened in Colab: no checkout around it
        t0 = time.time()
        r = subprocess.run([str(py), "-c", RUN_ONE, str(work / nb.name), str(work / f"{nb.stem}.out.ipynb"), str(args.timeout)],
                           cwd=work, env=env, capture_output=True, text=True)
        took = time.time() - t0
        now = installed(py)
        added = sorted(set(now) - set(base))
        results.append((nb.name, r.returncode == 0, took, added))
        print(f"{'PASS' if r.returncode == 0 else 'FAIL'} {nb.name} in {took:.0f} s; its install cell added {len(added)} packages", flush=True)
        if r.returncode:
            print(r.stdout[-3000:], "\n".join(l for l in r.stderr.splitlines() if "WARNING: Location" not in l)[-2000:], flush=True)
            print("added:", " ".join(f"{p}=={now[p]}" for p in added), flush=True)
        if added: subprocess.run([str(py), "-m", "pip", "uninstall", "-q", "-y", *added], check=True)
    passed = sum(ok for _, ok, _, _ in results)
    print(f"{passed} of {len(results)} chapters ran top to bottom; {sum(t for *_, t, _ in results) / 60:.1f} min")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
