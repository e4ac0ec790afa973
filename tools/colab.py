"""Make chapter notebooks runnable in Google Colab: an "Open in Colab" link, a first cell that installs what the chapter
needs (only what is missing), and a last cell that exports only inside a checkout. Safe to run again: it updates the
cells it wrote before instead of adding new ones.

Every chapter (each nbs/*.ipynb but the index) gets, right after its title:
- a Markdown cell with a link that opens the notebook of the main branch in Colab (from `git_url` and `branch` of settings.ini);
- a code cell that pip-installs optimi_nb and the chapter's other third-party imports (versions as settings.ini pins
  them) when they are missing; the environment variable OPTIMI_NB_SOURCE replaces the git URL for optimi_nb (a local
  checkout, for tools/colab_check.py); files of the checkout that the chapter reads are fetched next to the notebook
  when it is not in a checkout; and, when no GPU is present, cells flagged `#| cuda` print a note instead of failing.
The cell that calls `nbdev_export()` runs it only inside a checkout with nbdev installed.

Usage: python3 tools/colab.py [--check] [nbs/02_kahan.ipynb ...]   (default: every chapter; --check writes nothing and
fails if a chapter's cells are not what this script would write: CI runs it)"""
import argparse, configparser, json, re, secrets, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALL_MARK = "# Colab, or any Python with PyTorch: install what this chapter needs, only what is missing."
EXPORT_MARK = "# Inside a checkout only (not in Colab): regenerate optimi_nb/ from the notebooks."
# Files of the checkout a chapter reads, by notebook: the name next to the notebook -> the path in the repository
CHECKOUT_FILES = {"40_speed.ipynb": {"benchmark_cpu.json": "nbs/benchmark_cpu.json", "benchmark.py": "benchmarks/benchmark.py",
                                     "measured.json": "nbs/measured.json"},
                  "35_8bit_states.ipynb": {"benchmark.py": "benchmarks/benchmark.py", "speed_8bit.py": "benchmarks/speed_8bit.py",
                                           "measured.json": "nbs/measured.json"},
                  "30_memory.ipynb": {"measured.json": "nbs/measured.json"},
                  "50_differences.ipynb": {"measured.json": "nbs/measured.json"},
                  "36_4bit_states.ipynb": {"measure_4bit.py": "benchmarks/measure_4bit.py", "4bit.json": "nbs/4bit.json", "measured.json": "nbs/measured.json"},
                  "41_shootout.ipynb": {"shootout.py": "benchmarks/shootout.py", "shootout.json": "nbs/shootout.json"}}
NOT_IN_COLAB = {"53_changelog.ipynb"}  # the release notes: text, and a check that needs the checkout's CHANGELOG.md
MODULE_TO_DIST = {"yaml": "pyyaml", "PIL": "pillow", "sklearn": "scikit-learn"}  # the few imports named unlike their package
PREINSTALLED = {"torch", "optimi_nb", "IPython", "fastai"}  # Colab has torch, IPython and fastai; optimi_nb is always installed first
# installed with it, at the versions settings.ini pins (nbdev 2 needs execnb<0.2); numpy because fastcore's test_eq compares
# tensors through it, and PyTorch does not install it (Colab has it, a bare Python with torch may not)
COMPANIONS = {"nbdev": ["execnb", "fastcore", "numpy"], "fastcore": ["numpy"], "transformers": ["accelerate"]}  # Trainer needs accelerate


def settings() -> dict:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "settings.ini")
    return dict(cfg["DEFAULT"])


def pins(cfg: dict) -> dict[str, str]:
    "The requirement of each package settings.ini names, by package name: {'fastcore': 'fastcore<2', ...}"
    reqs = (cfg.get("requirements", "") + " " + cfg.get("dev_requirements", "")).split()
    return {re.split(r"[<>=!~\[ ]", r, maxsplit=1)[0].lower(): r for r in reqs}


def imports(nb: dict) -> list[str]:
    "The top-level modules a notebook's code cells import, in order of first use"
    found = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or "nbdev_export()" in "".join(cell["source"]): continue  # that cell checks for nbdev itself
        for m in re.finditer(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w., ]+))", "".join(cell["source"]), re.M):
            for name in ([m[1]] if m[1] else [x.split()[0] for x in m[2].split(",") if x.strip()]):
                top = name.split(".")[0]
                if top and top not in found: found.append(top)
    return found


def needs(nb: dict, cfg: dict, name: str) -> dict[str, str]:
    "Module -> pip requirement for what the chapter and the scripts it fetches import, beyond the standard library and torch"
    pinned, out = pins(cfg), {}
    scripts = [ROOT / path for path in CHECKOUT_FILES.get(name, {}).values() if path.endswith(".py")]
    fetched = {"cells": [{"cell_type": "code", "source": [p.read_text()]} for p in scripts]}  # their imports too
    for mod in dict.fromkeys(imports(nb) + imports(fetched)):
        if mod in sys.stdlib_module_names or mod in PREINSTALLED or mod == "__future__": continue
        dist = MODULE_TO_DIST.get(mod, mod).lower()
        if dist in pinned:
            out[mod] = pinned[dist]
            out |= {c: pinned.get(c, c) for c in COMPANIONS.get(mod, []) if c not in out}
        elif mod not in {Path(p).stem for p in CHECKOUT_FILES.get(name, {})}:
            print(f"{name}: imports {mod}, which settings.ini does not list; not installed by the Colab cell")
    return out


def repo_parts(cfg: dict) -> tuple[str, str]:
    "(owner/name, branch) of the repository, from git_url and branch"
    return re.sub(r"^https?://github\.com/|\.git$|/$", "", cfg["git_url"]), cfg.get("branch", "main")


def colab_cell(name: str, cfg: dict) -> str:
    repo, branch = repo_parts(cfg)
    url = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{cfg.get('nbs_path', 'nbs')}/{name}"
    return f"[Open in Colab]({url}): run this chapter in Google Colab; its first cell installs what it needs."


def install_cell(nb: dict, name: str, cfg: dict) -> str:
    repo, branch = repo_parts(cfg)
    reqs = {"optimi_nb": "_source", **{m: json.dumps(r) for m, r in needs(nb, cfg, name).items()}}
    lines = ["#| hide", INSTALL_MARK,
             "# OPTIMI_NB_SOURCE may name another pip source for optimi_nb, such as the path of a local checkout.",
             "import importlib.util, os, subprocess, sys",
             f'_source = os.environ.get("OPTIMI_NB_SOURCE", "git+{cfg["git_url"]}")',
             "_needs = {" + ", ".join(f'"{m}": {r}' for m, r in reqs.items()) + "}",
             "_missing = [req for mod, req in _needs.items() if importlib.util.find_spec(mod) is None]",
             'if _missing: subprocess.run([sys.executable, "-m", "pip", "install", "-q", *_missing], check=True); importlib.invalidate_caches()']
    lines += ["# What the chapter runs on. A GPU below compute capability 8.0 (Colab's free T4) emulates bf16 and torch.compile does",
              "# not compile bf16 for it: a compiled bf16 step warns once and runs eager; fp16 compiles (optimi_nb.low_precision.native_low_precision)",
              "import torch",
              "_gpu = (f\"{torch.cuda.get_device_name()}, compute capability {'.'.join(map(str, torch.cuda.get_device_capability()))}\"",
              '        if torch.cuda.is_available() else "none, running on the CPU")',
              '_triton = importlib.util.find_spec("triton") and __import__("triton").__version__',
              'print(f"torch {torch.__version__}, triton {_triton or \'not installed\'}; GPU: {_gpu}")']
    files = CHECKOUT_FILES.get(name)
    if files:
        lines += ["# Files of the repository this chapter reads, fetched next to the notebook outside a checkout",
                  "import shutil, urllib.request",
                  "from pathlib import Path",
                  f"for _name, _path in {json.dumps(files)}.items():",
                  '    if Path(_name).exists() or Path("..", _path).exists() or Path(_path).exists(): continue  # here, or a checkout',
                  "    if os.path.isdir(_source): shutil.copy(Path(_source, _path), _name)",
                  f'    else: urllib.request.urlretrieve(f"https://raw.githubusercontent.com/{repo}/{branch}/{{_path}}", _name)']
    if any(re.search(r"^#\|\s*cuda\b", "".join(c["source"]), re.M) for c in nb["cells"] if c["cell_type"] == "code"):
        lines += ["# Without a GPU, a cell flagged `#| cuda` (a GPU measurement) prints a note instead of failing",
                  "import re, torch",
                  "def _skip_gpu_cell(lines):",
                  '    if any(re.match(r"#\\|\\s*cuda\\b", l) for l in lines if l.startswith("#|")):',
                  '        return [\'print("This cell needs a GPU and was skipped; in Colab: Runtime > Change runtime type > GPU")\\n\']',
                  "    return lines",
                  '_shell = get_ipython() if "get_ipython" in globals() else None',
                  "if _shell and not torch.cuda.is_available() and not any(getattr(f, \"__name__\", \"\") == \"_skip_gpu_cell\" for f in _shell.input_transformers_cleanup):",
                  "    _shell.input_transformers_cleanup.append(_skip_gpu_cell)"]
    return "\n".join(lines)


EXPORT_CELL = "\n".join(["#| hide", EXPORT_MARK, "import importlib.util",
                         "from pathlib import Path",
                         'if Path("../settings.ini").exists() and importlib.util.find_spec("nbdev"):',
                         "    import nbdev; nbdev.nbdev_export()"])


def new_cell(kind: str, source: str) -> dict:
    cell = {"cell_type": kind, "id": secrets.token_hex(4), "metadata": {}, "source": source.splitlines(keepends=True)}
    if kind == "code": cell |= {"execution_count": None, "outputs": []}
    return cell


def set_source(cell: dict, source: str) -> bool:
    "Give `cell` this source; say whether it changed"
    lines = source.splitlines(keepends=True)
    if cell["source"] == lines or "".join(cell["source"]) == source: return False
    cell["source"] = lines
    return True


def apply(path: Path, cfg: dict, write: bool = True) -> bool:
    "Give one chapter its Colab link, install cell and checkout-only export cell; say whether the notebook changed"
    nb = json.loads(path.read_text())
    cells, changed = nb["cells"], False
    link, install = colab_cell(path.name, cfg), install_cell(nb, path.name, cfg)
    at_link = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and "colab.research.google.com/github/" in "".join(c["source"])), None)
    if at_link is None:
        cells.insert(1, new_cell("markdown", link)); changed = True; at_link = 1
    else: changed |= set_source(cells[at_link], link)
    at_install = next((i for i, c in enumerate(cells) if c["cell_type"] == "code" and INSTALL_MARK in "".join(c["source"])), None)
    if at_install is None:
        cells.insert(at_link + 1, new_cell("code", install)); changed = True
    else: changed |= set_source(cells[at_install], install)
    for cell in cells:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and "nbdev_export()" in src and (EXPORT_MARK in src or re.fullmatch(r"(#\|\s*hide\s*\n)?\s*(import nbdev;?\s*)?\n?\s*(nbdev\.)?nbdev_export\(\)\s*", src)):
            changed |= set_source(cell, EXPORT_CELL)
    if changed and write:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
        subprocess.run(["nbdev_clean", "--fname", str(path)], check=True, cwd=ROOT)
    return changed


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="chapter notebooks; default: every nbs/*.ipynb but the index")
    parser.add_argument("--check", action="store_true", help="write nothing; fail if a chapter's cells are not as written")
    args = parser.parse_args()
    cfg = settings()
    nbs = ROOT / cfg.get("nbs_path", "nbs")
    paths = [Path(p) for p in args.notebooks] or sorted(p for p in nbs.glob("*.ipynb") if p.name != cfg.get("readme_nb", "index.ipynb"))
    stale = []
    for p in paths:
        if p.name == cfg.get("readme_nb", "index.ipynb") or p.name in NOT_IN_COLAB: continue
        changed = apply(p, cfg, write=not args.check)
        if changed and args.check: stale.append(p.name)
        elif not args.check: print(f"{p}: {'updated' if changed else 'already up to date'}")
    if args.check:
        print(f"colab: {len(stale)} chapters whose Colab cells differ from what tools/colab.py writes"
              + (f" (run it): {', '.join(stale)}" if stale else ""))
        sys.exit(1 if stale else 0)
