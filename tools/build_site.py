"""Build the documentation site offline, into the doc_path of settings.ini (_docs/), and README.md from the index notebook.

nbdev turns the notebooks into a Quarto project in _proc/ (front matter, show_doc API docs, hidden cells), smalldocs
renders that project in pure Python, and KaTeX from npm is served from the site itself. Building needs PyPI and npm
only; viewing needs no network at all. With Quarto installed, `nbdev_docs` builds the same notebooks the usual way."""
import json, re, shutil, subprocess
from pathlib import Path
import nbdev.doclinks
from nbdev.config import get_config
from nbdev.quarto import nbdev_sidebar, refresh_quarto_yml
from nbdev.serve import proc_nbs

KATEX_VERSION = "0.16.11"  # the version smalldocs links from a CDN; we serve this one from site_libs/katex instead
KATEX_CDN = f"https://cdn.jsdelivr.net/npm/katex@{KATEX_VERSION}/dist"


def process_notebooks() -> Path:
    "nbdev's pre-render steps, without the Quarto install that `nbdev_proc_nbs` starts with; return the _proc folder"
    refresh_quarto_yml()
    nbdev.doclinks._build_modidx()
    nbdev_sidebar.__wrapped__()
    return proc_nbs(force=True)


def render(proc: Path, site: Path) -> None:
    "Render the Quarto project in `proc` with smalldocs and move the result to `site`"
    subprocess.run(["smalldocs", "render", str(proc)], check=True)
    shutil.rmtree(site, ignore_errors=True)
    shutil.move(proc / site.name, site)


def vendor_katex(site: Path, build: Path) -> None:
    "Install KaTeX with npm into `build` (once) and copy its stylesheet, scripts and fonts into the site"
    dist = build / "node_modules" / "katex" / "dist"
    if not (dist / "katex.min.js").exists():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(build), f"katex@{KATEX_VERSION}"], check=True)
    target = site / "site_libs" / "katex"
    for name in ("katex.min.css", "katex.min.js", "contrib/auto-render.min.js", "fonts"):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (dist / name).is_dir() else shutil.copy)(dist / name, target / name)


def output_files(proc: Path) -> dict[str, str]:
    "Map each page's Quarto file name (nbdev's `output-file`, used by doc links) to the name smalldocs gives it"
    pages = {}
    for nb in proc.glob("*.ipynb"):
        match = re.search(r"output-file: ([\w.-]+)", nb.read_text())
        if match: pages[match[1]] = nb.stem + ".html"
    return pages


def localise_links(site: Path, pages: dict[str, str], online: str) -> None:
    "Point KaTeX at the vendored copy and nbdev's absolute doc links at the local pages"
    for html in site.rglob("*.html"):
        offset = "../" * (len(html.relative_to(site).parts) - 1)
        text = html.read_text().replace(KATEX_CDN, f"{offset}site_libs/katex")
        text = re.sub(re.escape(online) + r"([\w.-]+\.html)", lambda m: offset + pages.get(m[1], m[1]), text)
        html.write_text(text)
        remote = re.findall(r'(?:src|href)="(https?://[^"]+\.(?:js|css|mjs))"', text)
        if remote: raise RuntimeError(f"{html} still loads {remote} from the network")


def write_readme(index: Path, readme: Path, pages: dict[str, str], online: str) -> None:
    "Write README.md from the index notebook, as `nbdev_readme` does with Quarto: hidden cells out, links to the online docs"
    nb_to_page = {html.removesuffix(".html") + ".ipynb": page for page, html in pages.items()}
    blocks = []  # (cell type, text); a run of code cells becomes one code block
    for cell in json.loads(index.read_text())["cells"]:
        lines = "".join(cell["source"]).splitlines()
        if any(re.match(r"#\|\s*(hide|default_exp)", l) for l in lines): continue
        text = "\n".join(l for l in lines if not l.startswith("#|")).strip()
        if cell["cell_type"] == "code" and blocks and blocks[-1][0] == "code": blocks[-1] = ("code", f"{blocks[-1][1]}\n\n{text}")
        elif cell["cell_type"] == "code": blocks.append(("code", text))
        else: blocks.append(("markdown", re.sub(r"\]\(([\w.-]+\.ipynb)\)", lambda m: f"]({online}{nb_to_page.get(m[1], m[1])})", text)))
    readme.write_text("\n\n".join(f"```python\n{t}\n```" if kind == "code" else t for kind, t in blocks) + "\n")


if __name__ == "__main__":
    cfg = get_config()
    site = cfg.config_path / cfg.doc_path.name
    proc = process_notebooks()
    render(proc, site)
    vendor_katex(site, cfg.config_path / ".build")
    pages, online = output_files(proc), f"{cfg.doc_host}{cfg.doc_baseurl}/"
    localise_links(site, pages, online)
    write_readme(cfg.nbs_path / cfg.readme_nb, cfg.config_path / "README.md", pages, online)
    print(f"site built: open {site / 'index.html'}")
