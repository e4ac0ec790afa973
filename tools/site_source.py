"""Exported code on the page: nbdev hides `#| export` cells and shows only their API docs; the site shows each exported
cell's source too, folded under "Source: name" right after the API docs nbdev adds for it (or where the cell stood, for a
cell with no public name), as a code cell with Quarto's `code-fold`, so it is highlighted as every other cell is. Test
cells (those that call fastcore's `test_*` or assert) are folded the same way under "Test": they run in CI, and a reader
sees derivation, code, lesson and result first; their outputs stay in view.

`show_exported_source()` swaps two of nbdev's processors for the ones here, before `proc_nbs` runs them."""
import ast
import nbdev.processors

TESTS = {"test_eq", "test_ne", "test_close", "test_fail", "test_is", "test_eq_type", "test_warns", "test_stdout"}  # fastcore's
EXPORTED = {"export", "exports", "exporti"}  # cells whose code goes into the library
HIDDEN = {"hide", "default_exp"}  # cells nbdev hides whatever else they say
ORIGINAL = {"rm_export": nbdev.processors.rm_export, "mv_exports": nbdev.processors.mv_exports}


def patched_name(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    "A function's name, as `Class.name` when fastcore's `@patch` adds it to `Class` (the annotation of its `self`)"
    patched = any(isinstance(d, ast.Name) and d.id == "patch" or isinstance(d, ast.Call) and getattr(d.func, "id", "") == "patch"
                  for d in node.decorator_list)
    first = node.args.args[0].annotation if node.args.args else None
    return f"{first.id}.{node.name}" if patched and isinstance(first, ast.Name) else node.name


def defined_names(source: str) -> list[str]:
    "The functions, classes and names assigned at the top level of a cell's code (imports are not definitions)"
    try: body = ast.parse(source).body
    except SyntaxError: return []
    names = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)): names.append(patched_name(node))
        elif isinstance(node, ast.ClassDef): names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name) and t.id != "__all__"]
    return names


def is_test(source: str) -> bool:
    "Whether a cell's code checks something: a call of fastcore's `test_*` functions, or an assert"
    try: tree = ast.parse("\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))))
    except SyntaxError: return False
    # at the top level or in loops, not inside the functions and classes a cell defines (an argument check there)
    run = [n for top in tree.body if not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
           for n in ast.walk(top)]
    return any(isinstance(n, ast.Assert) or isinstance(n, ast.Call) and getattr(n.func, "id", "") in TESTS for n in run)


def fold_source(cell) -> None:
    """nbdev's `rm_export`, except that an exported cell which defines something stays, as a code cell folded under
    "Source: its names", without its directives and outputs; and a test cell is folded under "Test", outputs kept"""
    directives = cell.directives_ or {}
    if cell.cell_type == "code" and not directives.keys() & (EXPORTED | HIDDEN | {"echo"}) and is_test(cell.source):
        cell.source = f'#| code-fold: true\n#| code-summary: "Test"\n{cell.source}'
        return
    if cell.cell_type != "code" or not directives.keys() & EXPORTED or directives.keys() & HIDDEN: return ORIGINAL["rm_export"](cell)
    lines = cell.source.splitlines()
    while lines and lines[0].startswith("#|"): lines.pop(0)
    code = "\n".join(lines).strip("\n")
    names = defined_names(code)
    if not names: return ORIGINAL["rm_export"](cell)
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    cell.source = f'#| code-fold: true\n#| code-summary: "Source: {shown}"\n{code}'
    cell.outputs, cell.folded_ = [], True
fold_source.__name__ = "rm_export"  # the name nbdev's `skip_procs` setting knows it by


class fold_after_docs(ORIGINAL["mv_exports"]):
    "nbdev's `mv_exports`, then each folded source moved after the API docs that nbdev inserted for its cell"
    def begin(self):
        super().begin()
        cells, i = self.nb.cells, 0
        while i < len(cells):
            j = i + 1
            if cells[i].get("folded_"):
                while j < len(cells) and cells[j].get("has_sd"): j += 1
                cells.insert(j - 1, cells.pop(i))
            i = j
fold_after_docs.__name__ = "mv_exports"


def show_exported_source() -> None:
    "Make nbdev's processing keep exported source, folded (nbdev's base processors look these two names up when they run)"
    nbdev.processors.rm_export, nbdev.processors.mv_exports = fold_source, fold_after_docs
