"""Check the house limits of optimi_nb; print a report and exit 1 if any limit is broken.

1. each optimi_nb/*.py (not _modidx.py) at most 300 lines, listed as a markdown table;
2. no class over 150 lines, no function or method over 60; 3. no exported notebook cell over 60 lines;
4. no line over 120 characters that a notebook's code holds (nbdev's own lines, the module docstring and `__all__`,
are not ours to wrap); 5. no optimizer's __init__ redeclares the base's shared
options; 6. a chapter imports only modules exported by chapters numbered up to its own; 7. only the base
layer imports storage, and no file but codecs.py and storage.py tests storage details (scale keys, int8/uint8 dtypes);
8. every function that asks for a tensor's device is explained in tools/device_checks.py (what the triton check
needs), and every entry there still asks.
Run from anywhere: `python3 tools/house_check.py` (standard library only).
"""
import ast, json, re, sys
from pathlib import Path
from device_checks import stale_device_checks, unknown_device_checks  # tools/, beside this file

ROOT = Path(__file__).resolve().parent.parent
LIB, NBS = ROOT / "optimi_nb", ROOT / "nbs"
MAX_FILE, MAX_CLASS, MAX_FUNC, MAX_CELL = 300, 150, 60, 60
MAX_WIDTH = 120
SHARED = {"decouple_lr", "max_lr", "kahan_sum", "foreach", "gradient_release", "stochastic_rounding",
          "compiled", "maximize", "cautious", "state_precision", "kahan_precision"}
# the base's own files: the only ones that may import storage (torch_state_dicts.py: the checkpoints' mixin, which
# decodes states for torch.optim)
ALLOWED_STORAGE_IMPORTERS = {"base.py", "dispatch.py", "update_run.py", "checkpoint.py", "state_fit.py", "compiled_call.py",
                             "layout.py", "plan.py", "update.py", "torch_state_dicts.py"}
# grad_scale (a GradScaler's attribute) and rms_lr_scale (StableAdamW's function) are not storage keys
STORAGE_DETAIL = [r"""(?<!grad)(?<!rms_lr)_scale["'\]]""", r"""endswith\(["']_scale""", r"torch\.u?int8"]
STORAGE_IMPORT = [r"from \.storage import", r"from \. import .*\bstorage\b", r"import optimi_nb\.storage"]
EXPORT = re.compile(r"#\|\s*export\w*(?:\s+([\w.]+))?\s*$")
DEFAULT_EXP = re.compile(r"^\s*#\|\s*default_exp\s+([\w.]+)", re.M)
# notebooks import absolutely (`from optimi_nb.x import`), which nbdev_export turns into `from .x import`
IMPORT = re.compile(r"^\s*from\s+(?:\.|optimi_nb\b\.?)([\w.]*)\s+import\s+(\([^)]*\)|[\w ,]+)", re.M)
FILES = sorted(p for p in LIB.glob("*.py") if p.name != "_modidx.py")
TREES = {p: ast.parse(p.read_text()) for p in FILES}
LINES = {p: len(p.read_text().splitlines()) for p in FILES}  # as `wc -l` counts them

def what(tree):
    """First line of a module's docstring (or of its first top-level string, as after `__version__`)."""
    return next((n.value.value.strip().splitlines()[0] for n in tree.body if isinstance(n, ast.Expr)
                 and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)), "?")

def cells(nb):
    """Yield (cell index, source, module it exports to or None) for each code cell of notebook `nb`."""
    srcs = ["".join(c["source"]) if c["cell_type"] == "code" else None for c in json.loads(nb.read_text())["cells"]]
    default = DEFAULT_EXP.search("\n".join(s for s in srcs if s))
    for i, src in enumerate(srcs):
        if src is None: continue
        head = [l.strip() for l in src.splitlines() if l.strip()]
        head = head[:next((k for k, l in enumerate(head) if not l.startswith("#|")), len(head))]
        e = next((m for m in map(EXPORT.match, head) if m), None)
        yield i, src, (e.group(1) or (default.group(1) if default else None)) if e else None

def check_files():
    """Check 1: every module within MAX_FILE lines; print them all as a markdown table."""
    print("| file | lines | what it holds |\n|---|---:|---|")
    for p in FILES: print(f"| {p.name} | {LINES[p]} | {what(TREES[p])} |")
    return [f"{p.name}: {LINES[p]} lines" for p in FILES if LINES[p] > MAX_FILE]

def check_defs():
    """Check 2: no class over MAX_CLASS lines, no function over MAX_FUNC (decorators excluded)."""
    return [f"{p.name}:{n.lineno} {n.name}: {n.end_lineno - n.lineno + 1} lines" for p, t in TREES.items()
            for n in ast.walk(t) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > (MAX_CLASS if isinstance(n, ast.ClassDef) else MAX_FUNC)]

def check_cells():
    """Check 3: no exported notebook cell over MAX_CELL lines (reported as notebook:cell index:lines)."""
    return [f"{nb.relative_to(ROOT)}:{i}:{len(src.splitlines())}" for nb in sorted(NBS.glob("*.ipynb"))
            for i, src, mod in cells(nb) if mod and len(src.splitlines()) > MAX_CELL]

def check_width():
    """Check 4: no line of the library's code over MAX_WIDTH characters, outside what nbdev writes itself."""
    bad = []
    for p in FILES:
        lines, generated = p.read_text().splitlines(), {0} if p.read_text().startswith('"""') else set()
        generated |= {k for k, line in enumerate(lines) if line.startswith("__all__") or line.startswith("__version__")}
        bad += [f"{p.name}:{k + 1}: {len(line)} characters" for k, line in enumerate(lines)
                if k not in generated and len(line) > MAX_WIDTH]
    return bad

def check_options():
    """Check 5: no __init__ outside base.py declares a shared option."""
    bad = []
    for p, tree in TREES.items():
        for n in ast.walk(tree):
            if p.name == "base.py" or not isinstance(n, ast.FunctionDef) or n.name != "__init__": continue
            a = n.args
            names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x} & SHARED
            if names: bad.append(f"{p.name}:{n.lineno} __init__ declares {', '.join(sorted(names))}")
    return bad

def chapter_number(nb: Path) -> tuple[int, str]:
    """A chapter's place in import order: its number, then any letter after it (18 < 18a < 18b < 19)."""
    digits, letters = re.match(r"(\d+)([a-z]*)_", nb.name).groups()
    return int(digits), letters

def check_order():
    """Check 6: each chapter imports only modules exported by chapters numbered up to its own."""
    exports, imports = {}, []  # module -> (number, notebook); (number, notebook, module, dependency)
    for nb in sorted(NBS.glob("[0-9]*_*.ipynb")):  # index.ipynb is exempt
        num = chapter_number(nb)
        for _, src, mod in cells(nb):
            if not mod: continue
            exports.setdefault(mod, (num, nb.name))
            for frm, names in IMPORT.findall(src):
                deps = [frm.split(".")[0]] if frm else [x.split()[0] for x in names.strip("()").split(",") if x.strip()]
                imports += [(num, nb.name, mod, d) for d in deps]
    return [f"nbs/{nb} exports {mod} importing .{dep}, which nbs/{exports[dep][1]} exports (later)"
            for num, nb, mod, dep in dict.fromkeys(imports) if dep in exports and exports[dep][0] > num]

def check_storage():
    """Check 7: storage imported only by the base layer; storage details tested only in codecs.py and storage.py."""
    bad = []
    for p in (p for p in FILES if p.name not in ("codecs.py", "storage.py")):  # the formats, and the layer that keeps them
        for k, line in enumerate(p.read_text().splitlines(), 1):
            if p.name not in ALLOWED_STORAGE_IMPORTERS and any(re.search(r, line) for r in STORAGE_IMPORT):
                bad.append(f"{p.name}:{k} imports storage: {line.strip()}")
            if any(re.search(r, line) for r in STORAGE_DETAIL):
                bad.append(f"{p.name}:{k} tests a storage detail: {line.strip()}")
    return bad

def check_device_checks():
    """Check 8: tools/device_checks.py explains every device check of optimi_nb, and no entry is stale."""
    return ([f"not explained in tools/device_checks.py: {u}" for u in unknown_device_checks()]
            + [f"stale entry of tools/device_checks.py: {s}" for s in stale_device_checks()])

CHECKS = [(f"1. files at most {MAX_FILE} lines", check_files),
          (f"2. classes at most {MAX_CLASS} lines, functions at most {MAX_FUNC}", check_defs),
          (f"3. exported cells at most {MAX_CELL} lines", check_cells), (f"4. lines at most {MAX_WIDTH} characters", check_width),
          ("5. shared options declared only in base.py", check_options), ("6. chapter import order", check_order),
          ("7. storage stays behind the base layer", check_storage),
          ("8. device checks explained for the triton check", check_device_checks)]

if __name__ == "__main__":
    failed = 0
    for title, check in CHECKS:
        print(f"\n## {title}")
        bad = check()
        for b in bad: print(f"  FAIL {b}")
        print(f"  {len(bad)} offender(s)" if bad else "  ok")
        failed += bool(bad)
    print(f"\nhouse_check: {len(CHECKS)} checks, {failed} failed")
    sys.exit(1 if failed else 0)
