"""The rendered pages made readable on a phone: figures with alt text and a readable width, tables in the text that
reflow into one block per row when they are wider than the column (styles.css has the layout, the script here picks
the tables and labels each cell with its column's name)."""
import base64, html, re, struct
from pathlib import Path

# Appended to smalldocs.js (which runs once the page is parsed): reflow the Markdown tables (not API docs) that a phone
# cannot fit, and let a tap show a plot at its full width (styles.css gives it a readable one)
PAGE_SCRIPT = r"""
{
// a Markdown table (in the text or printed by a cell, not an API doc's) wider than its column on a phone: one block
// per row, each cell labelled with its column's name (styles.css); measured again when the window changes size
const prose = Array.from(document.querySelectorAll("main .sd-table > table")).filter((t) => !t.closest(".cell-output-markdown:has(> h3, > h4)"));
prose.forEach((t) => {
  const heads = Array.from(t.querySelectorAll("thead th")).map((th) => th.textContent.trim());
  t.querySelectorAll("tbody tr").forEach((tr) => Array.from(tr.cells).forEach((td, i) => { if (heads[i]) td.dataset.label = heads[i]; }));
});
const phone = window.matchMedia("(max-width: 575.98px)");
const reflow = () => prose.forEach((t) => {
  t.classList.remove("sd-reflow");
  if (phone.matches && t.parentElement.scrollWidth > t.parentElement.clientWidth + 1) t.classList.add("sd-reflow");
});
reflow();
window.addEventListener("resize", reflow);
// a tap on a plot on a phone shows it at full size, in its box that scrolls sideways; a second tap fits it again
document.querySelectorAll(".cell-output-display img[style*='--fig-width']").forEach((img) => img.addEventListener("click", () => {
  if (phone.matches) img.classList.toggle("sd-zoomed");
}));
}
"""

IMG = re.compile(r'<img\b[^>]*>')
FIGURE = re.compile(r'<figure class="figure">\s*<p>(<img\b[^>]*>)</p>\s*<figcaption>(.*?)</figcaption>', re.S)


def png_width(src: str) -> int | None:
    "The width in pixels of a PNG given as a data: URL, from its header; None for anything else"
    m = re.match(r"data:image/png;base64,([A-Za-z0-9+/]{32})", src)
    if not m: return None
    head = base64.b64decode(m[1])
    return struct.unpack(">I", head[16:20])[0] if head[12:16] == b"IHDR" else None


def caption_as_alt(page: str) -> str:
    "Give a figure's picture its caption as alt text when the cell set a caption (`fig-cap`) and no `fig-alt`"
    def fix(m):
        img, cap = m[1], html.unescape(re.sub(r"<[^>]+>", "", m[2])).strip()
        if re.search(r'\balt="[^"]', img) or not cap: return m[0]
        bare = re.sub(r'\s*\balt=""', "", img)
        return m[0].replace(img, bare.replace("<img", f'<img alt="{html.escape(cap)}"', 1))
    return FIGURE.sub(fix, page)


def mark_full_width(page: str) -> str:
    "Mark each PNG plot with its width (`--fig-width`), the width a tap shows it at on a phone (styles.css)"
    def mark(m):
        tag = m[0]
        src = re.search(r'\bsrc="([^"]{0,80})', tag)
        width = png_width(src[1]) if src else None
        if not width or "style=" in tag: return tag
        return tag[:-1].rstrip("/ ") + f' style="--fig-width: {width}px">'
    return IMG.sub(mark, page)


def breakable_code(page: str) -> str:
    """Let a long name in a table cell (`prepare_ddp_for_gradient_release`, `torch.distributed.checkpoint`) break after
    its underscores and dots, so that a table of them fits its column"""
    long_code = lambda m: re.sub(r"(?<=[_.])(?=\w)", "<wbr>", m[0]) if len(m[1]) > 16 else m[0]
    return re.sub(r"<td\b[^>]*>.*?</td>", lambda td: re.sub(r"<code>([^<]+)</code>", long_code, td[0]), page, flags=re.S)


def phone_friendly(site: Path) -> None:
    """Add alt text from captions and readable widths to the figures of every page, break points to the long names in
    its tables, and the page script to smalldocs.js"""
    for path in site.glob("*.html"):
        text = path.read_text()
        new = breakable_code(mark_full_width(caption_as_alt(text)))
        if new != text: path.write_text(new)
    js = site / "site_libs" / "smalldocs.js"
    js.write_text(js.read_text() + PAGE_SCRIPT)
