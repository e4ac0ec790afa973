"""Build the documentation site offline, into the doc_path of settings.ini (_docs/), and README.md from the index notebook.

nbdev turns the notebooks into a Quarto project in _proc/ (front matter, show_doc API docs, hidden cells; here each
exported cell's source stays, folded under its API docs: site_source.py), smalldocs renders that project in pure Python
(figures, tables and the sidebar are then made readable on a phone: site_pages.py and styles.css), and KaTeX from npm
is served from the site itself. Building needs PyPI and npm only (tools/docs.sh installs npm with apt-get where it is
missing); viewing needs no network at all, and works from disk (file://), search included. With Quarto installed,
`nbdev_docs` builds the same notebooks the usual way, with the same page names, sidebar and page navigation (without
the folded source, which this build adds).

Usage: python3 tools/build_site.py [--no-readme]"""
import argparse, ast, collections.abc, copy, importlib, inspect, json, re, shutil, subprocess, sys, textwrap, types, typing, warnings
from html import unescape as html_unescape
from pathlib import Path
import nbdev.doclinks, nbdev.processors
from nbdev.config import get_config
from nbdev.quarto import nbdev_sidebar, refresh_quarto_yml
from nbdev.serve import proc_nbs
from site_pages import phone_friendly
from site_source import show_exported_source

KATEX_VERSION = "0.16.11"  # the version smalldocs links from a CDN; we serve this one from site_libs/katex instead
KATEX_CDN = f"https://cdn.jsdelivr.net/npm/katex@{KATEX_VERSION}/dist"


# ---------------------------------------------------------------- the sidebar, from the index's chapter groups

def chapter_groups(index: Path) -> list[tuple[str, list[str]]]:
    "The index's chapter lists: each list of `[title](NN_name.ipynb)` links under the paragraph before it, as (group, notebooks)"
    groups, title = [], None
    for cell in json.loads(index.read_text())["cells"]:
        if cell["cell_type"] != "markdown": continue
        for line in "".join(cell["source"]).splitlines():
            link = re.match(r"\s*[-*]\s+\[[^\]]+\]\(([\w.-]+\.ipynb)\)", line)
            if link and title:
                if not groups or groups[-1][0] != title: groups.append((title, []))
                groups[-1][1].append(link[1])
            elif line.strip() and not link:
                # "Foundations, shared by every optimizer:" names the group "Foundations"; a heading or prose ends it
                title = re.split(r"[,:]", line.strip())[0] if line.rstrip().endswith(":") and not line.startswith("#") else None
    return groups


def write_sidebar(nbs: Path, readme_nb: str) -> Path:
    """Write nbs/sidebar.yml (Quarto's format, so `nbdev_docs` uses it too: settings.ini has `custom_sidebar = True`):
    the index, then one section per chapter group of the index, then any notebook the index does not list"""
    groups = chapter_groups(nbs / readme_nb)
    listed = {nb for _, nbs_ in groups for nb in nbs_}
    missing = sorted(p.name for p in nbs.glob("*.ipynb") if p.name != readme_nb and p.name not in listed)
    if missing:
        print(f"note: {', '.join(missing)} not linked from a chapter list of {readme_nb}; listed under 'More' in the sidebar")
        groups.append(("More", missing))
    lines = ["# Written by tools/build_site.py from the chapter lists of index.ipynb; edit those, not this file.",
             "website:", "  sidebar:", "    contents:", f"      - {readme_nb}"]
    for title, files in groups:
        lines += [f'      - section: "{title}"', "        contents:"] + [f"          - {f}" for f in files]
    path = nbs / "sidebar.yml"
    text = "\n".join(lines) + "\n"
    if not path.exists() or path.read_text() != text: path.write_text(text)
    return path


def sync_changelog(root: Path, page: str = "53_changelog.ipynb") -> None:
    "Copy CHANGELOG.md (after nbdev's `<!-- do not remove -->` line) into the release notes page, its fourth cell"
    path = root / "nbs" / page
    nb = json.loads(path.read_text())
    body = (root / "CHANGELOG.md").read_text().split("<!-- do not remove -->", 1)[1].strip()
    if "".join(nb["cells"][3]["source"]).strip() == body: return
    nb["cells"][3]["source"] = body.splitlines(keepends=True)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    print(f"{page}: copied CHANGELOG.md in (commit it)")


def process_notebooks() -> Path:
    "nbdev's pre-render steps, without the Quarto install that `nbdev_proc_nbs` starts with; return the _proc folder"
    cfg = get_config()
    sync_changelog(cfg.config_path)
    refresh_quarto_yml()
    nbdev.doclinks._build_modidx()
    write_sidebar(cfg.nbs_path, cfg.readme_nb)
    nbdev_sidebar.__wrapped__()  # does nothing while settings.ini has custom_sidebar = True
    # nbdev runs every cell that imports something, to render show_doc; like the tests, leave out `#| cuda` and
    # `#| slow` cells (in this process: n_workers=0, so the patch applies)
    flags, do_eval = set(cfg.tst_flags.split()), nbdev.processors._do_eval
    nbdev.processors._do_eval = lambda cell: None if flags & set(cell.directives_ or {}) else do_eval(cell)
    nbdev.processors.exec_show_docs.__call__ = imports_alone_on_failure(nbdev.processors.exec_show_docs.__call__)
    # nbdev's note on every lesson cell that imports and computes (it prints the whole cell): true of most chapters here,
    # and what matters, a cell that fails when run for the API docs, imports_alone_on_failure reports
    warnings.filterwarnings("ignore", message="Found cells containing imports and other code")
    show_exported_source()
    return proc_nbs(force=True, n_workers=0)


def imports_alone_on_failure(run):
    """Wrap nbdev's show_doc executor: a lesson cell that mixes imports with code (which nbdev runs for its imports,
    out of the notebook's order) and fails there gets only its imports run, with a warning, instead of failing the build"""
    def call(self, cell):
        outputs = copy.deepcopy(cell.get("outputs"))
        try: return run(self, cell)
        except Exception:
            if cell.directives_.keys() & {"export", "exports", "exporti", "exec_doc"} or "show_doc" in cell.source: raise
            body = ast.parse("\n".join(l for l in cell.source.splitlines() if not l.lstrip().startswith(("%", "!")))).body
            imports = "\n".join(ast.unparse(n) for n in body if isinstance(n, (ast.Import, ast.ImportFrom)))
            self.k.run(imports)  # sets self.k.exc again: None when the imports alone succeed
            if self.k.exc: raise
            cell["outputs"] = outputs
            title = getattr(self.nb, "frontmatter_", {}).get("title", "")
            print(f"warning: {title}, cell {cell.idx_} (id {cell.get('id', '?')}): it mixes imports with code that fails when nbdev runs it for the API docs;"
                  " only its imports were run (nbdev's advice: imports in a cell of their own)")
    return call


# ---------------------------------------------------------------- pages at Quarto's names

def page_names(proc: Path) -> dict[str, str]:
    "Map each processed notebook's file name to the page name Quarto gives it (nbdev's `output-file`): 07_base.ipynb -> base"
    names = {}
    for nb in proc.glob("*.ipynb"):
        match = re.search(r"output-file: ([\w.-]+)\.html", nb.read_text())
        names[nb.name] = match[1] if match else nb.stem
    return names


def rename_pages(proc: Path, online: str) -> dict[str, str]:
    """Rename the processed notebooks to their page names, so smalldocs writes base.html as Quarto does, and rewrite
    the links to them: `[x](07_base.ipynb#a)` and nbdev's absolute doc links `{online}base.html#a` become relative"""
    names = page_names(proc)
    ipynb = re.compile(r"(\]\(|href=\\?\"|^\s*- |contents:\s*)(?:\./)?(" + "|".join(map(re.escape, names)) + r")(?=[#)\\\"\s]|$)", re.M)
    def fix(text: str) -> str:
        text = ipynb.sub(lambda m: m[1] + names[m[2]] + ".ipynb", text)
        return re.sub(re.escape(online) + r"([\w.-]+)\.html", r"\1.ipynb", text)
    for nb in list(proc.glob("*.ipynb")):
        text = re.sub(r'\s*"output-file: [\w.-]+\\n",', "", fix(nb.read_text()))  # smalldocs names pages by file name
        nb.unlink()
        (proc / f"{names[nb.name]}.ipynb").write_text(text)
    for yml in proc.glob("*.yml"): yml.write_text(fix(yml.read_text()))
    return names


# ---------------------------------------------------------------- show_doc signatures as a parameter table

def _split_top(text: str, sep: str, limit: int = -1) -> list[str]:
    "Split `text` at `sep` outside brackets and quotes, at most `limit` times"
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            if c == quote and text[i - 1] != "\\": quote = None
        elif c in "'\"": quote = c
        elif c in "([{": depth += 1
        elif c in ")]}": depth -= 1
        elif c == sep and depth == 0 and limit != 0:
            parts.append(text[start:i]); start, limit = i + 1, limit - 1
    return parts + [text[start:]]


def _cell(text: str) -> str:
    "Text for a Markdown table cell"
    return text.strip().replace("|", "\\|")


def type_text(anno) -> str:
    """An annotation as a reader writes it: `Union[Tensor, list[Tensor]]` (what the `Tensors` alias stands for) as
    `Tensor | list[Tensor]`, `Optional[float]` as `float | None`, `torch.Tensor` as `Tensor`"""
    if anno is inspect.Parameter.empty: return ""
    if anno is None or anno is type(None): return "None"
    if anno is Ellipsis: return "..."
    if isinstance(anno, str): return anno
    origin, args = typing.get_origin(anno), typing.get_args(anno)
    if origin in (typing.Union, types.UnionType): return " | ".join(type_text(a) for a in args)
    if origin is typing.Literal: return f"Literal[{', '.join(map(repr, args))}]"
    if origin is collections.abc.Callable and args and isinstance(args[0], list):
        return f"Callable[[{', '.join(map(type_text, args[0]))}], {type_text(args[1])}]"
    if origin is not None:
        name = getattr(anno, "_name", None) or getattr(origin, "__name__", None) or repr(origin)
        return f"{name}[{', '.join(map(type_text, args))}]" if args else name
    if isinstance(anno, type): return anno.__name__
    return re.sub(r"\b(typing|torch|collections\.abc)\.", "", repr(anno))


def default_text(value) -> str:
    "A default as code: a class by its name (`Embedding`, not `<class 'torch.nn.modules.sparse.Embedding'>`)"
    if isinstance(value, type): return value.__name__
    if isinstance(value, tuple): return "(" + ", ".join(map(default_text, value)) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def documented_object(text: str):
    """The object a show_doc output documents, from its source link (`.../optimi_nb/adam.py#L33`, the module) and its
    heading (`### Adam.step`, the name, looked up in that module or the package's top level); None if not found"""
    src = re.search(r"\[source\]\([^)]*/blob/[^/]+/([\w/]+)\.py#L(?:\d+|None)\)", text)
    head = re.search(r"^#{2,4} ([\w.]+)\s*$", text, re.M)
    if not (src and head): return None
    for module in (src[1].replace("/", "."), src[1].split("/")[0]):
        try:
            obj = importlib.import_module(module)
            for part in head[1].split("."): obj = getattr(obj, part)
            return obj
        except Exception: continue
    return None


def source_line(text: str) -> str:
    "show_doc's source link with the line nbdev did not find (`#LNone`: a patched method, a property) from the object"
    if "#LNone)" not in text: return text
    obj = documented_object(text)
    try:  # the `def` line, as nbdev links, not its decorators'
        lines, start = inspect.getsourcelines(inspect.unwrap(getattr(obj, "fget", obj)))
        line = "#L" + str(start + next(i for i, l in enumerate(lines) if re.match(r"\s*(async def|def|class) ", l)))
    except (TypeError, OSError, StopIteration): line = ""  # the file, at least, not a fragment that goes nowhere
    return text.replace("#LNone)", f"{line})")


def live_signature(text: str) -> inspect.Signature | None:
    """The signature of the object a show_doc output documents, from its source link (`.../optimi_nb/adam.py#L33`, the
    module) and its heading (`### Adam.step`, the name); None when it cannot be imported or has none"""
    obj = documented_object(text)
    try: return None if obj is None else inspect.signature(obj)
    except (TypeError, ValueError): return None


def signature_table(block: str, live: inspect.Signature | None = None) -> tuple[str, str] | None:
    """Turn show_doc's signature (a `def name(\\n    param:type=default, # docment\\n)->ret: # docment` code block) into a
    short signature and a table of name, type, default and details, as nbdev's older show_doc did; None if it is not one.
    Returns (signature code block, table or "")"""
    lines = block.rstrip("\n").splitlines()
    one = re.fullmatch(r"(?:(?:async )?def|class) ([\w.]+)\((.*)\)(?:->(.+?))?:", lines[0]) if len(lines) == 1 else None
    if one:  # no docments: one line already; show it without `def`
        ret = one[3] if one[3] and one[3] != "None" else None
        return f"```python\n{one[1]}({one[2]})" + (f" -> {ret}" if ret else "") + "\n```\n", ""
    head = re.fullmatch(r"((?:async )?def|class) ([\w.]+)\(", lines[0]) if lines else None
    tail = re.fullmatch(r"\)(?:->(.+?))?:(?: # (.*))?", lines[-1]) if len(lines) > 2 else None
    if not head or not tail: return None
    params = []  # [name, type, default, details]
    for line in lines[1:-1]:
        if not line.startswith("    "): return None
        code, *comment = _split_top(line.strip(), "#", 1)
        if not code.strip() and comment and params:  # a docment's continuation line
            params[-1][3] += " " + comment[0].strip(); continue
        fields = [f.strip() for f in _split_top(code, ",") if f.strip()]
        if not fields: return None
        for field in fields:
            name_anno, *default = _split_top(field, "=", 1)
            name, *anno = _split_top(name_anno, ":", 1)
            if not re.fullmatch(r"\*{0,2}\w+", name.strip()): return None
            params.append([name.strip(), anno[0] if anno else "", default[0] if default else "", ""])
        if comment: params[-1][3] = comment[0].strip()
    ret, ret_doc = (tail[1] if tail[1] != "None" else None), tail[2]  # `-> None` says nothing a reader needs
    if params and params[-1][0].startswith("**") and not params[-1][3] and ret_doc and not ret:
        # docments gives the comment of a last `**kwargs,` line (before `) -> None:`) to the return value
        params[-1][3], ret_doc = ret_doc, None
    if live is not None:  # the types as written, where show_doc names only the outer class (`Union`, `Optional`)
        for p in params:
            lp = live.parameters.get(p[0].lstrip("*"))
            if lp is not None and lp.annotation is not inspect.Parameter.empty: p[1] = type_text(lp.annotation)
            if lp is not None and lp.default is not lp.empty and isinstance(lp.default, (type, tuple)): p[2] = default_text(lp.default)
        if ret: ret = type_text(live.return_annotation) or ret
    shown = [p[0] + (f"={p[2]}" if p[2] else "") for p in params]
    sig = f"{head[2]}({', '.join(shown)})" + (f" -> {ret}" if ret else "")
    if len(sig) > 80:
        body = textwrap.fill(", ".join(shown), 76, initial_indent="    ", subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)
        sig = f"{head[2]}(\n{body}\n)" + (f" -> {ret}" if ret else "")
    if not any(t or d or doc for _, t, d, doc in params) and not ret_doc: return f"```python\n{sig}\n```\n", ""
    rows = ["|  | **Type** | **Default** | **Details** |", "|--|--|--|--|"]
    code = lambda s: f"`{_cell(s)}`" if s and s.strip() else ""
    esc = lambda s: re.sub(r"([*_])", r"\\\1", s)  # a name's * and _ are not emphasis
    rows += [f"| {esc(n)} | {code(t)} | {code(d)} | {_cell(doc)} |" for n, t, d, doc in params]
    if ret or ret_doc: rows.append(f"| **Returns** | {code(ret or tail[1])} |  | {_cell(ret_doc or '')} |")
    return f"```python\n{sig}\n```\n", "\n".join(rows) + "\n"


def no_superscript(md: str) -> str:
    """Escape `^` outside code and maths in a docstring or docment: `w_t = t^r·γ_max^p` is plain text from Python, not
    Pandoc's `^superscript^`"""
    return "".join(part if part[:1] in "`$" else part.replace("^", "\\^") for part in re.split(r"(`[^`]*`|\$[^$]*\$)", md))


def dunder_heading(md: str) -> str:
    """An API doc's heading with a double underscore (`### __getattr__`, `### Adam.__init__`) as text, not emphasis, with
    the anchor nbdev's doc links use (`#__getattr__`)"""
    return re.sub(r"^(#{2,4}) ([\w.]*__[\w.]*)[ \t]*$", lambda m: f"{m[1]} {m[2].replace('_', chr(92) + '_')} {{#{m[2].lower()}}}", md, flags=re.M)


def tabulate_signatures(proc: Path) -> int:
    """Rewrite every show_doc output of the processed notebooks with `signature_table`: the short signature where the code
    block was, the table after the docstring; return how many were rewritten"""
    n = 0
    for path in proc.glob("*.ipynb"):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            for out in cell.get("outputs", []):
                md = out.get("data", {}).get("text/markdown")
                if md is None: continue
                text = source_line("".join(md) if isinstance(md, list) else md)
                block = re.search(r"```python\n(.*?)```\n?", text, re.S)
                if not (text.startswith("---") and block): continue  # not nbdev's show_doc output
                parts = signature_table(block[1], live_signature(text))
                if parts is None: continue
                n += 1
                text = dunder_heading(text[:block.start()]) + parts[0] + no_superscript(text[block.end():])
                out["data"]["text/markdown"] = text.rstrip("\n") + "\n\n" + no_superscript(parts[1]) if parts[1] else text
        path.write_text(json.dumps(nb, indent=1))
    return n


# ---------------------------------------------------------------- render, then make the site work offline

TEX_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ", "eta": "η",
    "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ",
    "tau": "τ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ",
    "Theta": "Θ", "Lambda": "Λ", "Sigma": "Σ", "Phi": "Φ", "Omega": "Ω", "nabla": "∇", "partial": "∂", "sum": "Σ",
    "prod": "Π", "infty": "∞", "top": "ᵀ", "leftarrow": "←", "gets": "←", "rightarrow": "→", "to": "→", "mapsto": "↦",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "sim": "∼", "in": "∈",
    "cdot": "·", "times": "×", "odot": "⊙", "pm": "±", "ldots": "…", "cdots": "⋯", "dots": "…", "lVert": "‖",
    "rVert": "‖", "Vert": "‖", "vert": "|", "lvert": "|", "rvert": "|", "propto": "∝", "circ": "∘", "sqrt": "√",
    "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "quad": " ", "qquad": " ",
}
TEX_ACCENTS = {"hat": "\u0302", "widehat": "\u0302", "bar": "\u0304", "overline": "\u0304", "tilde": "\u0303", "vec": "\u20d7", "dot": "\u0307"}
SUPERSCRIPT = str.maketrans("0123456789+-=()nit", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱᵗ")
SUBSCRIPT = str.maketrans("0123456789+-=()aeijnortx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢⱼₙₒᵣₜₓ")


def tex_to_text(tex: str) -> str:
    r"""Inline maths as plain text for the search index and its snippets: `\hat m_t = \frac{m_t}{1-\beta_1^t}` becomes
    `m̂ₜ = mₜ/(1-β₁ᵗ)`"""
    group = r"(\{(?:[^{}]|\{[^{}]*\})*\}|\\[a-zA-Z]+|[^\s{}\\])"  # a {group} (one level of nesting), a command or one character
    inner = lambda g: g[1:-1] if g.startswith("{") else g
    wrap = lambda s: s if re.fullmatch(r"\\?\w+", s) else f"({s})"
    s = tex
    for _ in range(3):  # nested fractions and roots, from the inside out
        s = re.sub(r"\\[td]?frac\s*" + group + r"\s*" + group, lambda m: f"{wrap(inner(m[1]))}/{wrap(inner(m[2]))}", s)
        s = re.sub(r"\\sqrt\s*" + group, lambda m: "√" + wrap(inner(m[1])), s)
        s = re.sub(r"\\(?:text|mathrm|mathbf|mathit|mathsf|mathtt|operatorname|textrm|boldsymbol)\s*" + group, lambda m: inner(m[1]), s)
        s = re.sub(r"\\(" + "|".join(TEX_ACCENTS) + r")\s*" + group, lambda m: inner(m[2]) + TEX_ACCENTS[m[1]], s)
    s = re.sub(r"\\(left|right|big|Big|bigg|Bigg)\b\s*\\?", "", s)
    s = re.sub(r"\\([a-zA-Z]+)", lambda m: TEX_SYMBOLS.get(m[1], m[1]), s)
    s = re.sub(r"\\[,;:! ]", " ", s).replace("\\\\", " ").replace("\\{", "{").replace("\\}", "}").replace("\\%", "%")
    def script(m, table, mark):
        body = inner(m[1])
        mapped = body.translate(table)
        return mapped if all(c != o or c in " " for c, o in zip(mapped, body)) and " " not in body else f"{mark}({body})" if len(body) > 1 else mark + body
    s = re.sub(r"\^" + group, lambda m: script(m, SUPERSCRIPT, "^"), s)
    s = re.sub(r"_" + group, lambda m: script(m, SUBSCRIPT, "_"), s)
    return re.sub(r"\s+", " ", s.replace("{", "").replace("}", "")).strip()


def render(proc: Path, site: Path) -> None:
    """Render the Quarto project in `proc` with smalldocs and move the result to `site`; in this process, so that the
    search index gets inline maths as plain text (`β₁ᵗ`, not `\beta_1^t`)"""
    import smalldocs.markdown, smalldocs.site
    plain = smalldocs.markdown.plain
    def plain_maths(tokens):
        "smalldocs' plain text of an inline run, with its maths as text"
        return "".join(tex_to_text(t.content) if t.type == "math_inline" else plain([t]) for t in tokens or [])
    smalldocs.markdown.plain = plain_maths
    try: warnings_ = smalldocs.site.build(str(proc), quiet=True).warnings
    finally: smalldocs.markdown.plain = plain
    # _quarto.yml's settings for Quarto's own formats and maths, kept for nbdev_docs: one note, not a warning each
    for_quarto = [w for w in warnings_ if re.search(r" is ignored\b| is not built: smalldocs makes only html", w)]
    for w in warnings_:
        if w not in for_quarto: print(f"warning: {w}", file=sys.stderr)
    if for_quarto: print(f"note: {len(for_quarto)} settings of nbs/_quarto.yml are for Quarto (nbdev_docs) only")
    shutil.rmtree(site, ignore_errors=True)
    shutil.move(proc / site.name, site)


def vendor_katex(site: Path, build: Path) -> None:
    "Install KaTeX with npm into `build` (once) and copy its stylesheet, scripts and fonts into the site"
    dist = build / "node_modules" / "katex" / "dist"
    if not (dist / "katex.min.js").exists():
        if not shutil.which("npm"): raise SystemExit("build_site: KaTeX comes from npm, which is not installed: run `bash tools/docs.sh` (it installs npm with apt-get) or `apt-get install npm`")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(build), f"katex@{KATEX_VERSION}"], check=True)
    target = site / "site_libs" / "katex"
    for name in ("katex.min.css", "katex.min.js", "contrib/auto-render.min.js", "fonts"):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (dist / name).is_dir() else shutil.copy)(dist / name, target / name)


SEARCH_FETCH = """      const r = await fetch(offset + "search.json");
      index = await r.json();"""
SEARCH_SCRIPT = """      // the index ships as a script: a page opened from disk (file://) may not fetch search.json
      if (!window.smalldocsSearchIndex) await new Promise((resolve) => {
        const s = document.createElement("script");
        s.src = offset + "search.js"; s.onload = resolve; s.onerror = resolve;
        document.head.appendChild(s);
      });
      index = window.smalldocsSearchIndex || [];"""


SEARCH_HITS = """      const hits = fuse ? fuse.search(q, { limit }).map((h) => h.item)
        : index.filter((e) => (e.title + " " + e.section + " " + e.text).toLowerCase().includes(q.toLowerCase())).slice(0, limit);"""
SEARCH_RANKED = """      // every word found, ranked (search.js); fuzzy matching only when no entry has every word (a typo)
      let hits = window.smalldocsRank ? window.smalldocsRank(index, q, limit) : [];
      if (!hits.length) hits = fuse ? fuse.search(q, { limit }).map((h) => h.item)
        : index.filter((e) => (e.title + " " + e.section + " " + e.text).toLowerCase().includes(q.toLowerCase())).slice(0, limit);"""
# Fuse's fuzzy score ranks the hundred sections that mention "bf16" alike, in page order, and matches "sgd momentum" as
# one string. This ranks a section by where each word is found (its heading, then how often its text has it), plus the
# page's own weight for the word (in its title, in its description, how often the page uses it), and needs every word;
# a page's second, third... results count for less, so that the first results come from several pages
SEARCH_RANK = r"""window.smalldocsRank = (index, q, limit) => {
  const words = q.toLowerCase().split(/[\s,;:()]+/).filter((w) => w);
  const esc = (w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const tests = words.map((w) => ({ w, exact: new RegExp("(^|\\W)" + esc(w) + "($|\\W)"), prefix: new RegExp("(^|\\W)" + esc(w)),
    count: (s) => (s.match(new RegExp("(^|\\W)" + esc(w) + "(?=$|\\W)", "g")) || []).length,
    starts: (s) => (s.match(new RegExp("(^|\\W)" + esc(w), "g")) || []).length }));
  // a page's own weight for each word: in its title, in its description, and how often its sections use the word
  const pages = {};
  index.forEach((e) => {
    const key = e.href.split("#")[0], p = pages[key] || (pages[key] = { head: (e.title + " ").toLowerCase(), about: (e.page || "").toLowerCase(), uses: tests.map(() => 0) });
    tests.forEach((t, k) => { p.uses[k] += t.count(e.text.toLowerCase()) + t.count(e.section.toLowerCase()); });
  });
  const scored = [];
  index.forEach((e, i) => {
    const text = e.text.toLowerCase(), section = e.section.toLowerCase(), page = pages[e.href.split("#")[0]];
    let total = 0;
    tests.forEach((t, k) => {
      if (total < 0) return;
      let s = t.exact.test(section) ? 6 : t.prefix.test(section) ? 4 : section.includes(t.w) ? 2 : 0;
      const n = t.count(text), m = n ? 0 : t.starts(text);
      s += n ? 1 + Math.log2(1 + n) : m ? 0.5 + 0.5 * Math.log2(1 + m) : text.includes(t.w) ? 0.25 : 0;
      if (!s) { total = -1; return; }
      s += (t.exact.test(page.head) ? 5 : t.prefix.test(page.head) ? 3 : 0) + (t.exact.test(page.about) ? 4 : 0) + 2 * Math.log2(1 + page.uses[k] / 10);
      total += s;
    });
    if (total < 0) return;
    if (words.length > 1 && (e.section + " " + e.text).toLowerCase().includes(words.join(" "))) total += 2;
    scored.push([total, i, e]);
  });
  scored.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  // a page's second, third... result counts for less, so that the first results come from several pages
  const seen = {};
  scored.forEach((s) => { const key = s[2].href.split("#")[0]; s[0] *= 0.6 ** (seen[key] = (seen[key] ?? -1) + 1); });
  scored.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  return scored.slice(0, limit).map((s) => s[2]);
};
"""


def search_offline(site: Path) -> None:
    """Ship the search index as search.js (a script loads from file://, a fetch of search.json does not) with its ranking,
    and load both from there"""
    index = json.loads((site / "search.json").read_text())
    about = {}  # each page's description, for the ranking (not shown)
    for html in site.glob("*.html"):
        m = re.search(r'<meta name="description" content="([^"]*)"', html.read_text())
        about[html.name] = html_unescape(m[1]) if m else ""
    for entry in index: entry["page"] = about.get(entry["href"].partition("#")[0], "")
    (site / "search.js").write_text("window.smalldocsSearchIndex = " + json.dumps(index, ensure_ascii=False) + ";\n" + SEARCH_RANK)
    js = site / "site_libs" / "smalldocs.js"
    text = js.read_text()
    for old in (SEARCH_FETCH, SEARCH_HITS):
        if old not in text: raise RuntimeError(f"{js}: smalldocs' search changed; update SEARCH_FETCH and SEARCH_HITS in {__file__}")
    js.write_text(text.replace(SEARCH_FETCH, SEARCH_SCRIPT).replace(SEARCH_HITS, SEARCH_RANKED))


def fold_body_toc(site: Path) -> None:
    """The table of contents in the text (`toc-location: right-body`, for a screen too narrow for the margin; styles.css
    hides it on a wide one) folded under its title, so a phone shows the page first"""
    for html in site.rglob("*.html"):
        text = html.read_text()
        folded = re.sub(r'(<nav id="TOC-body" role="doc-toc">)<h2>(.*?)</h2>(.*?)</nav>', r"\1<details><summary>\2</summary>\3</details></nav>", text, count=1, flags=re.S)
        if folded != text: html.write_text(folded)


def navbar_version(proc: Path) -> None:
    "Show settings.ini's version at the right of the navbar, as a link to the repository (git_url)"
    import yaml
    cfg, path = get_config(), proc / "_quarto.yml"
    conf = yaml.safe_load(path.read_text())
    navbar = conf.setdefault("website", {}).setdefault("navbar", {})
    navbar["right"] = [*(navbar.get("right") or []), {"icon": "github", "text": f"v{cfg.version}", "href": cfg.git_url}]
    path.write_text(yaml.safe_dump(conf, sort_keys=False, allow_unicode=True))


def no_web_fonts(site: Path) -> None:
    "Drop the theme's @import of Google's web fonts: the page falls back to the system sans-serif, and nothing leaves the machine"
    for css in (site / "site_libs").rglob("*.css"):
        text = css.read_text()
        local = re.sub(r"@import url\(https?://[^)]+\);?", "", text)
        if local != text: css.write_text(local)
        remote = re.findall(r"url\(\s*['\"]?(https?://[^'\")]+)", local)
        if remote: raise RuntimeError(f"{css} still loads {remote} from the network")


def localise_links(site: Path, online: str) -> None:
    "Point KaTeX at the vendored copy and any remaining absolute doc links at the local pages; fail on scripts or styles from the network"
    for html in site.rglob("*.html"):
        offset = "../" * (len(html.relative_to(site).parts) - 1)
        text = html.read_text().replace(KATEX_CDN, f"{offset}site_libs/katex")
        text = re.sub(re.escape(online) + r"([\w.-]+\.html)", lambda m: offset + m[1], text)
        html.write_text(text)
        remote = re.findall(r'(?:src|href)="(https?://[^"]+\.(?:js|css|mjs|woff2?|ttf))"', text)
        if remote: raise RuntimeError(f"{html} still loads {remote} from the network")


def anchor_symbols(site: Path, modidx: Path) -> list[str]:
    """Give every symbol of optimi_nb/_modidx.py an anchor on its page: a method with no show_doc of its own gets an
    anchor at its class's API doc (`adam.html#adam.step_scalars` lands on `Adam`); return the symbols so anchored"""
    ns = {}
    exec(modidx.read_text(), ns)
    added = []
    for syms in ns["d"]["syms"].values():
        for name, (url, _src) in syms.items():
            page, _, anchor = url.partition("#")
            path = site / page
            if not anchor or not path.exists(): continue
            html = path.read_text()
            if f'id="{anchor}"' in html: continue
            parts = anchor.split(".")
            for k in range(len(parts) - 1, 0, -1):  # the nearest enclosing name that has an anchor
                at = re.search(rf'<[^<>]*\bid="{re.escape(".".join(parts[:k]))}"', html)
                if at:
                    path.write_text(html[:at.start()] + f'<span id="{anchor}"></span>' + html[at.start():])
                    added.append(name); break
    return added


def write_readme(index: Path, readme: Path, names: dict[str, str], online: str) -> None:
    "Write README.md from the index notebook, as `nbdev_readme` does with Quarto: hidden cells out, links to the online docs"
    blocks, apart = [], False  # (cell type, text); a run of code cells is one code block, which a hidden cell ends
    for cell in json.loads(index.read_text())["cells"]:
        lines = "".join(cell["source"]).splitlines()
        if any(re.match(r"#\|\s*(hide|default_exp)", l) for l in lines): apart = True; continue
        kind, text = cell["cell_type"], "\n".join(l for l in lines if not l.startswith("#|")).strip()
        if kind == "code" and any(re.match(r"#\|\s*echo:\s*false", l) for l in lines):  # only its Markdown output shows
            shown = [o["data"]["text/markdown"] for o in cell.get("outputs", []) if "text/markdown" in o.get("data", {})]
            if not shown: apart = True; continue
            kind, text = "markdown", "".join(shown[0]).strip()
        joined, apart = kind == "code" and blocks and blocks[-1][0] == "code" and not apart, False
        if joined: blocks[-1] = ("code", f"{blocks[-1][1]}\n\n{text}")
        elif kind == "code": blocks.append(("code", text))
        else: blocks.append(("markdown", re.sub(r"\]\(([\w.-]+\.ipynb)(#[^)]*)?\)", lambda m: f"]({online}{names.get(m[1], Path(m[1]).stem)}.html{m[2] or ''})", text)))
    readme.write_text("\n\n".join(f"```python\n{t}\n```" if kind == "code" else t for kind, t in blocks) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-readme", action="store_true", help="leave README.md as it is")
    args = parser.parse_args()
    cfg = get_config()
    site, online = cfg.config_path / cfg.doc_path.name, f"{cfg.doc_host}{cfg.doc_baseurl}/"
    proc = process_notebooks()
    names = rename_pages(proc, online)
    print(f"{tabulate_signatures(proc)} API signatures as parameter tables")
    navbar_version(proc)
    render(proc, site)
    vendor_katex(site, cfg.config_path / ".build")
    search_offline(site)
    fold_body_toc(site)
    no_web_fonts(site)
    localise_links(site, online)
    phone_friendly(site)
    anchored = anchor_symbols(site, cfg.lib_path / "_modidx.py")
    if anchored: print(f"{len(anchored)} methods without a show_doc of their own link to their class's API doc")
    if not args.no_readme: write_readme(cfg.nbs_path / cfg.readme_nb, cfg.config_path / "README.md", names, online)
    print(f"site built: open {site / 'index.html'}")
    # torch.compile's cleanup hooks of code compiled from the executed notebooks' namespaces, gone at exit, would each
    # print an ignored KeyError after the line above (as tests/conftest.py's pytest_unconfigure says)
    if (dynamo_utils := sys.modules.get("torch._dynamo.utils")) is not None: dynamo_utils.CleanupManager.instance.clear()
