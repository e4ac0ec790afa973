"""Open every page of the built site in headless Chromium, from disk (file://), and fail on what a reader would meet.

Checks, on each page: no console error or uncaught exception, no failed or off-machine request, no KaTeX error or
unrendered maths, every image loaded, no stderr, error or traceback output and no warning printed in an output, no raw
Markdown and no stray $ in the rendered text, no table row with fewer cells than its header. Then at a desktop width and
at a phone's (400 px): the page does not scroll sideways; nothing in the text column runs past it or is clipped;
Markdown tables and API docs (signature and parameter table) fit without sideways scrolling (code blocks, printed
outputs and HTML tables a cell printed may scroll in their own box); no code block or printed output wraps its lines;
every figure fits its column; no word in a table is broken across lines and no table cell is too narrow to read; on
the phone, a table of contents where the desktop page has one. In a phone's window (390x844): the opened sidebar
starts below the header, shows the home link and the first section, and reaches every link by scrolling.
Across the site: every relative link and anchor resolves, every README link to the site and every doc link in
optimi_nb/_modidx.py resolves to a built page and anchor, every public function, class and method of _modidx.py has
its source folded on its page, every page is in the sidebar, the navbar shows the version and links to the repository
(settings.ini), and searches find what they should (SEARCHES), readable, without raw TeX. Figures without alt text are
listed, and fail the check when CHECK_FIGURE_ALT=1. No page quotes a figure stored in nbs/measured.json with another
value (site_numbers.py), and the Python blocks of the front page and of every Usage or Quick start section run as copied,
each page's in order in one fresh python3, and call no test helper among example code (site_snippets.py).
Needs Debian's `chromium` (apt-get install chromium); talks to it over the DevTools pipe, so no Python package beyond
the standard library. Exit status 1 on any failure.

Usage: python3 tools/check_site.py [--site _docs] [--measured nbs/measured.json] [--shots DIR [--shot-pages index base ...]] [--width 1400] [--phone-width 400]"""
import argparse, ast, json, os, queue, re, shutil, subprocess, sys, tempfile, threading, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse
from site_numbers import number_problems
from site_snippets import snippet_problems

ROOT = Path(__file__).resolve().parents[1]
BROWSERS = 4  # the most browsers opened at once, one per core
PHONE = (390, 844)  # the window the sidebar is checked in: a phone held upright
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--hide-scrollbars", "--remote-debugging-pipe"]


class Chromium:
    "Headless Chromium driven over the DevTools protocol on a pipe (file descriptors 3 and 4 of the browser)"

    def __init__(self, width: int, height: int):
        exe = os.environ.get("CHROMIUM") or next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
        if not exe: sys.exit("check_site: no chromium on PATH; install Debian's package (apt-get install -y chromium) or set CHROMIUM")
        self.profile = tempfile.mkdtemp(prefix="check_site_")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        def fds():  # the browser reads commands on fd 3 and writes replies on fd 4 (dup first: the pipes may sit on 3 or 4)
            r, w = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(r, 3); os.dup2(w, 4)
        # close_fds=False: the fds 3 and 4 made in fds() must survive; every other descriptor here is close-on-exec
        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
                                     preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r); os.close(from_browser_w)
        self.width, self.height, self.n = width, height, 0
        self.replies, self.events = {}, queue.Queue()
        self.ready = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buf = b""
        while chunk := os.read(self.from_browser, 1 << 16):
            buf += chunk
            *msgs, buf = buf.split(b"\0")
            for raw in msgs:
                msg = json.loads(raw)
                if "id" in msg:
                    with self.ready: self.replies[msg["id"]] = msg; self.ready.notify_all()
                else: self.events.put(msg)

    def send(self, method: str, session: str | None = None, timeout: float = 60, **params) -> dict:
        "Send one command and wait for its reply"
        self.n += 1
        n = self.n
        msg = {"id": n, "method": method, "params": params, **({"sessionId": session} if session else {})}
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        with self.ready:
            if not self.ready.wait_for(lambda: n in self.replies, timeout): raise TimeoutError(f"{method}: no reply in {timeout} s")
            reply = self.replies.pop(n)
        if "error" in reply: raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def close(self) -> None:
        try: self.send("Browser.close", timeout=5)
        except Exception: pass
        try: self.proc.wait(10)
        except subprocess.TimeoutExpired: self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


class Tab:
    "One page in its own target, with its console, log and network events collected"
    scrolled: dict[int, int] = {}  # outputs and tables that scroll sideways in their own box, by window width, over all pages
    lock = threading.Lock()  # pages are checked in several threads

    def __init__(self, browser: Chromium):
        self.b = browser
        self.target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = browser.send("Target.attachToTarget", targetId=self.target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"): self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=browser.width, height=browser.height, deviceScaleFactor=1, mobile=False)
        self.problems: list[str] = []

    def send(self, method: str, **params) -> dict:
        return self.b.send(method, self.session, **params)

    def pump(self, until: str | None = None, timeout: float = 30) -> None:
        "Read the events; stop at the event `until` (or once the queue is quiet when None)"
        end = time.time() + timeout
        while time.time() < end:
            try: ev = self.b.events.get(timeout=0.2 if until is None else max(0.01, end - time.time()))
            except queue.Empty:
                if until is None: return
                continue
            if ev.get("sessionId") != self.session: continue
            m, p = ev["method"], ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                self.problems.append(f"uncaught exception: {d.get('exception', {}).get('description') or d.get('text')}")
            elif m == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                self.problems.append("console error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
            elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
                self.problems.append(f"console error: {p['entry']['text']} {p['entry'].get('url', '')}".strip())
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file:", "data:", "about:", "blob:")): self.problems.append(f"request leaves the machine: {url}")
            elif m == "Network.loadingFailed" and not p.get("canceled"):
                self.problems.append(f"failed to load: {p.get('errorText')} (request {p.get('requestId')})")
            if m == until: return
        if until: self.problems.append(f"timed out waiting for {until}")

    def goto(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.pump("Page.loadEventFired")
        self.pump()

    def layouts(self, width: int, height: int, phone_width: int) -> list[tuple[int, str]]:
        """Run LAYOUT at the desktop width, then at a phone's width (as a phone reports itself); return (width, problem)
        for each, and the table of contents missing on the phone where the desktop page has one"""
        out, desktop = [], None
        for w, h, mobile in ((width, height, False), (phone_width, 800, True)):
            self.send("Emulation.setDeviceMetricsOverride", width=w, height=h, deviceScaleFactor=1, mobile=mobile)
            self.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")  # laid out again at this width
            found = self.js(LAYOUT)
            out += [(w, p) for p in found["problems"]]
            desktop = desktop or found
            with self.lock: self.scrolled[w] = self.scrolled.get(w, 0) + found["scrolled"]
            if mobile and desktop["hasToc"] and not found["tocShown"]: out.append((w, "no table of contents to be seen"))
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        return out

    def sidebar_reach(self, width: int, height: int) -> list[str]:
        "Run SIDEBAR in a phone's window (`width` x `height`); return its problems"
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=True)
        problems = self.js(SIDEBAR)
        self.send("Emulation.setDeviceMetricsOverride", width=self.b.width, height=self.b.height, deviceScaleFactor=1, mobile=False)
        return problems

    def js(self, expr: str):
        r = self.send("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r: raise RuntimeError(f"page script failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, path: Path, selector: str | None = None) -> None:
        "Save the viewport as a PNG, scrolled so `selector` (if any) is at the top"
        if selector: self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (e) e.scrollIntoView(); }})()")
        time.sleep(1.0)
        import base64
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        self.b.send("Target.closeTarget", targetId=self.target)


# Everything the page itself can tell: run in the page after load
INSPECT = r"""(() => {
  const main = document.querySelector("main") || document.body;
  const out = {problems: [], ids: [], links: []};
  document.querySelectorAll("[id]").forEach(e => out.ids.push(e.id));
  document.querySelectorAll("a[name]").forEach(e => out.ids.push(e.getAttribute("name")));
  document.querySelectorAll("a[href]").forEach(a => out.links.push(a.getAttribute("href")));
  // KaTeX: an error box, or maths left as source
  document.querySelectorAll(".katex-error").forEach(e => out.problems.push("KaTeX error: " + (e.title || e.textContent).slice(0, 160)));
  document.querySelectorAll("span.math").forEach(e => { if (!e.querySelector(".katex")) out.problems.push("maths not rendered: " + e.textContent.slice(0, 80)); });
  // images
  document.querySelectorAll("img").forEach(i => { if (!i.complete || i.naturalWidth === 0) out.problems.push("image not loaded: " + i.getAttribute("src").slice(0, 100)); });
  // outputs a reader should not see: stderr (warnings, progress bars), errors, tracebacks, warnings printed to stdout
  const firstLine = s => s.trim().split("\n")[0].slice(0, 160);
  document.querySelectorAll(".cell-output-stderr").forEach(e => out.problems.push("stderr output on the page: " + firstLine(e.textContent)));
  document.querySelectorAll(".cell-output-error").forEach(e => out.problems.push("error output on the page: " + firstLine(e.textContent)));
  document.querySelectorAll(".cell-output:not(.cell-output-stderr):not(.cell-output-error)").forEach(e => {
    const m = e.textContent.match(/^.*(:\d+: [A-Z]\w*Warning: |Traceback \(most recent call last\)).*$/m);
    if (m) out.problems.push("warning or traceback in an output: " + m[0].trim().slice(0, 160));
  });
  // raw Markdown in rendered prose (a link or emphasis that was not converted); code is left alone
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {acceptNode: n =>
    n.parentElement.closest("code, pre, script, style, .katex") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  for (let n; (n = walker.nextNode());) {
    const m = n.textContent.match(/\[[^\]\n]+\]\((https?:|[\w.-]+\.(html|ipynb))[^)\s]*\)|\{target=|(^|\s)\*\*\S[^*]*\*\*(\s|$)/);
    if (m) out.problems.push("raw Markdown in the text: " + m[0].slice(0, 100));
    // a $ left in the text: maths not rendered, or a table row split by the | of a formula such as $|g|$
    const d = n.textContent.match(/.{0,30}\$.{0,30}/);
    if (d) out.problems.push("a stray $ in the text (maths left as source, or split by a table's |): " + d[0].trim());
  }
  // a table row with fewer cells than its header: a row cut short
  main.querySelectorAll("table").forEach(t => {
    const head = t.querySelector("thead tr"), n = head ? head.children.length : 0;
    t.querySelectorAll("tbody tr").forEach(r => { if (n && r.children.length < n) out.problems.push(`a table row with ${r.children.length} of its header's ${n} cells: ` + r.textContent.trim().slice(0, 80)); });
  });
  // superscript that is not a footnote: Pandoc's ^...^ eating a formula such as b^(t-1)/(1-b^t)
  main.querySelectorAll("sup").forEach(s => { if (!s.closest(".footnote-ref, a")) out.problems.push("stray superscript: " + s.textContent.slice(0, 60)); });
  out.sidebar = Array.from(document.querySelectorAll("#quarto-sidebar a.sidebar-link[href]")).map(a => a.getAttribute("href"));
  out.sections = Array.from(document.querySelectorAll("#quarto-sidebar .sidebar-item-section > .sidebar-item-container .menu-text")).map(e => e.textContent);
  out.prevnext = Array.from(document.querySelectorAll(".page-navigation a")).map(a => a.getAttribute("href"));
  // figures with no alt text; the exported source folded on the page (site_source.py)
  out.noAlt = Array.from(main.querySelectorAll("img")).filter(i => !(i.getAttribute("alt") || "").trim()).length;
  out.source = Array.from(main.querySelectorAll("details.code-fold pre")).map(e => e.textContent).join("\n");
  // the text a reader reads, by paragraph, list item, table row and printed output (site_numbers.py); the Python code
  // shown outside outputs and folded source, with the headings of the sections it is in (site_snippets.py)
  const prose = Array.from(main.querySelectorAll("p, li, tr, dt, dd, figcaption, caption, .cell-output pre:not(.sourceCode)"));
  out.texts = prose.filter(e => !e.closest("details.code-fold, pre.sourceCode")).map(e => e.innerText);
  const headings = e => { const hs = [];
    for (let s = e.closest("section"); s; s = s.parentElement.closest("section")) hs.push((s.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4") || {}).textContent || "");
    return hs; };
  out.code = Array.from(main.querySelectorAll("pre.sourceCode.python")).filter(e => !e.closest(".cell-output, details.code-fold"))
    .map(e => ({code: e.textContent, headings: headings(e)}));
  return out;
})()"""

# What a reader at this window width would find cut, clipped or cramped: run in the page at each width
LAYOUT = r"""(() => {
  const main = document.querySelector("main") || document.body;
  // the window's width: a phone that zooms out to fit a page too wide for it has innerWidth the page's width
  const problems = [], W = document.documentElement.clientWidth, phone = W < 576;
  const col = main.getBoundingClientRect();
  const style = e => getComputedStyle(e);
  const scrollBox = e => /auto|scroll/.test(style(e).overflowX);
  // elements that Quarto's column classes put in the margin on purpose, and KaTeX's own boxes
  const elsewhere = ".column-margin, .margin-caption, .margin-aside, div.aside, [class*='column-page'], [class*='column-screen'], [class*='column-body-outset'], .katex";
  const where = e => {  // the API doc's name, or the nearest heading before the element, to say where it is
    const api = e.closest(".cell-output-markdown") && e.closest(".cell-output-markdown").querySelector("h2, h3, h4");
    if (api) return "'" + api.textContent.trim().slice(0, 50) + "'";
    const hs = Array.from(main.querySelectorAll("h1, h2, h3, h4")).filter(h => h.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING);
    const h = hs[hs.length - 1];
    return (h ? "under '" + h.textContent.trim().slice(0, 50) + "'" : "at the top");
  };
  const tag = e => `<${e.tagName.toLowerCase()}${e.className && typeof e.className === "string" ? ' class="' + e.className.slice(0, 40) + '"' : ""}>`;
  const kind = e => e.closest(".cell-output-markdown") && e.closest(".cell-output-markdown").querySelector("h2, h3, h4") ? "API doc"
    : e.closest(".cell-output") ? "output" : e.closest(".sourceCode, pre") ? "code block" : e.tagName.toLowerCase();
  // the page itself must not scroll sideways
  const doc = document.scrollingElement || document.documentElement;
  if (doc.scrollWidth > W + 1) problems.push(`the page scrolls sideways: ${doc.scrollWidth} px wide in a ${W} px window`);
  // everything in the text column stays inside it, or inside a box of its own that scrolls sideways and itself fits
  // (what spills out is cut off by the page); report the outermost element that spills
  const spilled = [];
  for (const e of main.querySelectorAll("*")) {
    if (e.closest(elsewhere) || spilled.some(s => s.contains(e))) continue;
    let p = e.parentElement, inBox = false;
    for (; p && p !== main; p = p.parentElement) if (scrollBox(p)) { inBox = true; break; }
    if (inBox) continue;
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    if (r.right > col.right + 1 || r.left < col.left - 1) {
      spilled.push(e);
      problems.push(`${kind(e)} ${where(e)}: ${tag(e)} runs ${Math.round(Math.max(r.right - col.right, col.left - r.left))} px past the ${Math.round(col.width)} px column, cut off`);
    } else if (e.scrollWidth > e.clientWidth + 1 && e.clientWidth && /hidden|clip/.test(style(e).overflowX)) {
      spilled.push(e);
      problems.push(`${kind(e)} ${where(e)}: ${tag(e)} is ${e.scrollWidth} px wide in a ${e.clientWidth} px box that clips it`);
    }
  }
  // nothing is wider than the column: an API doc's signature and table fit the column; a Markdown table fits it (on a
  // phone, one block per row). A code block and a printed output keep their lines and may scroll in their own box, as
  // may an HTML table that a cell printed (its columns aligned) and a figure a reader tapped to full size.
  let scrolled = 0;
  const api = e => kind(e) === "API doc";
  main.querySelectorAll("pre, table, .sd-table, .cell-output-display").forEach(e => {
    if (e.closest(elsewhere) || !e.clientWidth || e.scrollWidth <= e.clientWidth + 1) return;
    const output = e.closest(".cell-output"), markdown = e.matches(".sd-table, .sd-table *") || e.querySelector(".sd-table");
    if (e.matches("pre") && !api(e) && scrollBox(e) || e.querySelector("img.sd-zoomed")
        || output && kind(e) === "output" && !markdown && (e.matches("table") || e.querySelector("table"))) { scrolled++; return; }
    if (e.querySelector("img") && !e.querySelector("table")) return;  // a figure: its own check, below
    const what = markdown && !api(e) ? "table" : output && kind(e) === "output" ? "printed output" : kind(e);
    problems.push(`${what} ${where(e)}: ${tag(e)} is ${e.scrollWidth} px wide in a ${e.clientWidth} px box (scrolls sideways)`);
  });
  // a code block or a printed output whose lines wrap: a wrapped line starts at column 0, hiding Python's indentation,
  // and a printed table loses its columns (an API doc's signature may wrap: it is one call)
  main.querySelectorAll("pre").forEach(e => {
    if (e.closest(elsewhere) || api(e) || !e.clientWidth) return;
    const c = e.querySelector("code") || e, wrapped = e.scrollHeight, saved = [e.style.whiteSpace, c.style.whiteSpace];
    e.style.whiteSpace = c.style.whiteSpace = "pre";  // the height its lines take unwrapped
    const kept = e.scrollHeight;
    [e.style.whiteSpace, c.style.whiteSpace] = saved;
    if (wrapped > kept + 2) problems.push(`${kind(e)} ${where(e)}: its lines wrap (${wrapped} px high, ${kept} unwrapped), going on at column 0`);
  });
  // a figure fits its column, scaled (a tap shows it at full size on a phone)
  main.querySelectorAll(".cell-output-display img:not(.sd-zoomed), main p > img").forEach(i => {
    const box = i.closest(".cell-output-display") || i.parentElement, r = i.getBoundingClientRect();
    if (r.width > box.clientWidth + 1) problems.push(`figure ${where(i)}: ${Math.round(r.width)} px wide in a ${box.clientWidth} px column, partly out of sight`);
  });
  // tables: no word broken across lines (a type cut mid-word; a break after a hyphen, a slash, an underscore or a dot
  // in a name is fine), no column too narrow to read (KaTeX's hidden MathML copy of a formula not counted)
  main.querySelectorAll("table").forEach(t => {
    if (t.closest(elsewhere)) return;
    const name = `${kind(t) === "API doc" ? "API table" : "table"} ${where(t)}`;
    let broken = null, cramped = null;
    t.querySelectorAll("td, th").forEach(c => {
      const r = c.getBoundingClientRect();
      if (!r.width) return;
      const shown = Array.from(c.querySelectorAll(".katex-mathml")).reduce((n, m) => n - m.textContent.length, c.textContent.trim().length);
      if (!cramped && shown > 24 && r.width < 110) cramped = `a cell is ${Math.round(r.width)} px wide for ${shown} characters ('${c.textContent.trim().slice(0, 30)}')`;
      const walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT, {acceptNode: n => n.parentElement.closest(".katex-mathml") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
      for (let n; !broken && (n = walker.nextNode());) {
        for (const m of n.textContent.matchAll(/[^\s\-\/_.\u2010-\u2014]+[\-\/_.\u2010-\u2014]?/g)) {
          const range = document.createRange();
          range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
          const tops = new Set(Array.from(range.getClientRects()).filter(x => x.width).map(x => Math.round(x.top)));
          if (tops.size > 1) { broken = m[0].slice(0, 40); break; }
        }
      }
    });
    if (broken) problems.push(`${name}: '${broken}' is broken across lines`);
    if (cramped) problems.push(`${name}: ${cramped}`);
  });
  // a table of contents the reader can reach at this width, when the page has one at all
  const toc = Array.from(document.querySelectorAll("#TOC, #TOC-body, .sd-toc"));
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && style(e).visibility !== "hidden" && style(e).opacity !== "0"; };
  const hasToc = toc.some(e => e.querySelector("a[href^='#']"));
  const tocShown = toc.some(e => shown(e) && e.querySelector("a[href^='#']"));
  return {problems, scrolled, hasToc, tocShown};
})()"""


# Whether a phone reaches every link of the opened sidebar by scrolling it, and sees its top (the home link and the first
# section) below the header at first: run in the page at a phone's window size
SIDEBAR = r"""(async () => {
  const side = document.querySelector("#quarto-sidebar"), toggle = document.querySelector(".quarto-btn-toggle");
  if (!side || !toggle) return ["no sidebar or no button to open it"];
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  toggle.click();
  await new Promise(r => setTimeout(r, 400));  // the sidebar slides in (.2 s)
  const problems = [], H = document.documentElement.clientHeight, header = document.querySelector("#quarto-header");
  const top = header ? header.getBoundingClientRect().bottom : 0, box = side.getBoundingClientRect();
  if (box.top < top - 1) problems.push(`the opened sidebar starts ${Math.round(top - box.top)} px under the header`);
  if (box.bottom > H + 1 && side.scrollHeight <= side.clientHeight + 1)
    problems.push(`the opened sidebar is ${Math.round(box.height)} px tall in a ${H} px window and does not scroll`);
  const name = a => a.textContent.trim().slice(0, 50);
  const seen = a => {  // a tap at the link's centre lands on the link
    const r = a.getBoundingClientRect(), hit = document.elementFromPoint(r.left + Math.min(r.width / 2, 40), r.top + r.height / 2);
    return r.height > 0 && r.top >= top - 1 && r.bottom <= H + 1 && hit && (a.contains(hit) || hit.contains(a));
  };
  side.scrollTop = 0; await frame();
  const first = side.querySelector("a.sidebar-link"), section = side.querySelector(".sidebar-item-section .sidebar-link");
  [first, section].forEach(a => { if (a && !seen(a)) problems.push(`'${name(a)}' is not to be seen when the sidebar opens`); });
  const links = Array.from(side.querySelectorAll("a.sidebar-link")), lost = links.filter(a => {
    side.scrollTop += a.getBoundingClientRect().top - (side.getBoundingClientRect().top + side.clientHeight / 2);
    return !seen(a);
  });
  if (lost.length) problems.push(`${lost.length} of ${links.length} links cannot be reached by scrolling it: ${lost.map(a => "'" + name(a) + "'").join(", ")}`);
  toggle.click();
  return problems;
})()"""


SEARCH = r"""(async () => {
  const input = document.querySelector(".smalldocs-search input");
  if (!input) return {error: "no search box"};
  const box = document.querySelector(".smalldocs-search-results");
  if (box) { box.classList.remove("show"); box.innerHTML = ""; }  // the results of an earlier query
  input.focus(); input.value = QUERY; input.dispatchEvent(new Event("input", {bubbles: true}));
  for (let i = 0; i < 50 && !document.querySelector(".smalldocs-search-results.show"); i++) await new Promise(r => setTimeout(r, 100));
  const hits = Array.from(document.querySelectorAll(".smalldocs-search-results .search-result"));
  const rgb = c => (c.match(/[\d.]+/g) || []).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => { const f = v => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const bgOf = e => { for (; e; e = e.parentElement) { const c = getComputedStyle(e).backgroundColor; if (!/rgba\(.*, 0\)|transparent/.test(c)) return c; } return "rgb(255,255,255)"; };
  let worst = 99;
  hits.slice(0, 5).forEach(h => h.querySelectorAll("div").forEach(d => {
    const a = lum(rgb(getComputedStyle(d).color)), b = lum(rgb(bgOf(d)));
    worst = Math.min(worst, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
  }));
  return {n: hits.length, first: hits.map(h => h.getAttribute("href")).slice(0, 5), contrast: worst,
          snippets: hits.map(h => (h.querySelector(".search-result-text") || {}).textContent || ""),
          none: !!document.querySelector(".smalldocs-search-results .search-none")};
})()"""


# (query, a page or page#anchor it must find among the first n results): a word in the text, a word that names a
# chapter's subject more than its title does, two words of which one names an API doc, and words found in maths
SEARCHES = [("kahan", "kahan.html", 3), ("bf16", "low_precision.html", 5), ("sgd momentum", "sgd.html#sgd", 3),
            ("bias correction", "adam.html", 3)]
# TeX a reader should not meet in a result: a command such as \frac or \beta, or a ^{...} or _{...} group
RAW_TEX = re.compile(r"\\(?:[td]?frac|sqrt|hat|bar|tilde|text|math\w+|left|right|cdot|times|leftarrow|[lr]?Vert|top|sum|"
                     r"alpha|beta|gamma|delta|epsilon|eta|theta|lambda|mu|rho|sigma|phi|chi|nabla|partial|infty)(?![a-zA-Z])|[\^_]\{")


def search_problems(tab: Tab) -> list[str]:
    "Run the searches of SEARCHES in the navbar's search box; a problem for each wanted result not found, raw TeX or poor contrast"
    out = []
    for query, want, n in SEARCHES:
        r = tab.js(SEARCH.replace("QUERY", json.dumps(query)))
        if r.get("error") or not r["n"]: out.append(f"search: '{query}' finds nothing ({r})"); continue
        ranks = [i for i, href in enumerate(r["first"]) if (href.removeprefix("./") if "#" in want else urldefrag(href.removeprefix("./"))[0]) == want]
        print(f"search '{query}': {r['n']} results, first {r['first'][:3]}, text contrast {r['contrast']:.1f}:1")
        if not ranks or ranks[0] >= n: out.append(f"search: '{query}' does not put {want} among the first {n} results: {r['first'][:n]}")
        if r["contrast"] < 4.5: out.append(f"search: results are hard to read, text contrast {r['contrast']:.1f}:1 (< 4.5)")
        tex = [s for s in r["snippets"] if RAW_TEX.search(s)]
        if tex: out.append(f"search: '{query}' shows raw TeX in a snippet: {RAW_TEX.search(tex[0])[0]!r} in {tex[0][:120]!r}")
    return out


def navbar_problems(tab: Tab, cfg: dict) -> list[str]:
    "The navbar must show settings.ini's version and link to the repository (git_url)"
    found = tab.js("""(() => { const nav = document.querySelector("#quarto-header .navbar") || document.body;
      return {text: nav.innerText, links: Array.from(nav.querySelectorAll("a[href]")).map(a => a.getAttribute("href"))}; })()""")
    out = []
    if cfg.get("version") and cfg["version"] not in found["text"]: out.append(f"no version {cfg['version']} (settings.ini) to be seen")
    if cfg.get("git_url") and not any(h.rstrip("/") == cfg["git_url"].rstrip("/") for h in found["links"]): out.append(f"no link to the repository {cfg['git_url']}")
    return out


def site_links(readme: Path, modidx: Path, online: str) -> list[tuple[str, str]]:
    "Links into the site from README.md and from the doc links of optimi_nb/_modidx.py, as (where, page#anchor)"
    out = []
    if readme.exists():
        out += [("README.md", m) for m in re.findall(re.escape(online) + r"([^)\s\"'>]*)", readme.read_text())]
    if modidx.exists():
        ns = {}
        exec(modidx.read_text(), ns)
        for mod, syms in ns["d"]["syms"].items():
            out += [(f"_modidx {name}", url.removeprefix(online)) for name, (url, _src) in syms.items() if not re.match(r"^\w+:", url.removeprefix(online)) and not re.match(r"_(?!_)", name.split(".")[-1])]  # nbdev documents no private name
    return out


def missing_source(modidx: Path, sources: dict[str, str], online: str) -> list[str]:
    """A failure for each public function, class and method of optimi_nb/_modidx.py whose page does not show its source
    folded (site_source.py): the last line of its definition in the library must be in a folded "Source" on its page"""
    ns, trees, out = {}, {}, []
    exec(modidx.read_text(), ns)
    for syms in ns["d"]["syms"].values():
        for full, (url, src) in syms.items():
            page, name = urldefrag(url.removeprefix(online))[0], full.split(".")[-1]
            if page not in sources or re.match(r"_(?!_)", name) or not (ROOT / src).exists(): continue
            text = trees.setdefault(src, (ROOT / src).read_text())
            nodes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name]
            last = [ast.get_source_segment(text, n).splitlines()[-1].strip() for n in nodes]
            if last and not any(line in sources[page] for line in last):
                out.append(f"{page}: the source of {full.removeprefix('optimi_nb.')} is not shown (no folded 'Source' has its last line {last[0]!r})")
    return out


def figures_without_alt(counts: dict[str, int]) -> list[str]:
    "Report the pages whose figures lack alt text (`fig-alt` or `fig-cap` on the cell); failures only when CHECK_FIGURE_ALT=1"
    missing = {page: n for page, n in sorted(counts.items()) if n}
    if not missing: return []
    listing = ", ".join(f"{page} ({n})" for page, n in missing.items())
    print(f"figures without alt text: {sum(missing.values())} on {len(missing)} pages: {listing}")
    if os.environ.get("CHECK_FIGURE_ALT") != "1": return []
    return [f"{page}: {n} figure(s) without alt text (add `#| fig-alt:` or `#| fig-cap:` to the plotting cell)" for page, n in missing.items()]


def check_pages(pages: list[Path], site: Path, args, cfg: dict) -> tuple[list[str], dict, dict, dict]:
    "Open `pages` one by one in a browser of their own: the failures, and each page's ids, links and what INSPECT found"
    failures, ids, links, sidebars = [], {}, {}, {}
    browser = Chromium(args.width, args.height)
    try:
        for page in pages:
            name = page.relative_to(site).as_posix()
            tab = Tab(browser)
            tab.goto(page.as_uri())
            found = tab.js(INSPECT)
            tab.pump()
            failures += [f"{name}: {p}" for p in tab.problems + found["problems"]]
            failures += [f"{name} at {w} px: {p}" for w, p in tab.layouts(args.width, args.height, args.phone_width)]
            failures += [f"{name} at {PHONE[0]}x{PHONE[1]}: sidebar: {p}" for p in tab.sidebar_reach(*PHONE)]
            ids[name], links[name], sidebars[name] = set(found["ids"]), found["links"], found
            if name == "index.html":
                failures += search_problems(tab)
                failures += [f"navbar: {p}" for p in navbar_problems(tab, cfg)]
                if args.shots:
                    Path(args.shots).mkdir(parents=True, exist_ok=True)
                    tab.screenshot(Path(args.shots) / "search.png")
            tab.close()
    finally:
        browser.close()
    return failures, ids, links, sidebars


def screenshots(site: Path, args) -> None:
    "Save --shot-pages at the desktop width and a phone's into --shots"
    Path(args.shots).mkdir(parents=True, exist_ok=True)
    browser = Chromium(args.width, args.height)
    try:
        for spec in args.shot_pages:
            stem, _, sel = spec.partition("@")
            for width, height, mobile, tail in ((args.width, args.height, False, ""), (args.phone_width, 800, True, "_phone")):
                tab = Tab(browser)
                tab.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=mobile)
                tab.goto((site / f"{stem}.html").as_uri())
                tab.pump()
                suffix = "_" + re.sub(r"\W+", "_", sel).strip("_") if sel else ""
                tab.screenshot(Path(args.shots) / f"{stem}{suffix}{tail}.png", sel or None)
                tab.close()
    finally:
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default=None, help="the built site (default: doc_path of settings.ini, _docs)")
    parser.add_argument("--measured", default=None, help="the stored figures pages must agree with (default: nbs_path of settings.ini, measured.json)")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=1000)
    parser.add_argument("--phone-width", type=int, default=400, help="the narrow window every page is also laid out in")
    parser.add_argument("--shots", default=None, help="save screenshots of --shot-pages into this folder")
    parser.add_argument("--shot-pages", nargs="*", default=["index", "base", "adamw", "kahan", "speed", "memory"],
                        help="pages to screenshot; PAGE@SELECTOR scrolls to an element first (e.g. speed@img)")
    args = parser.parse_args()
    cfg = dict(re.findall(r"^(\w+)\s*=\s*(.*)$", (ROOT / "settings.ini").read_text(), re.M))
    site = Path(args.site or ROOT / cfg.get("doc_path", "_docs")).resolve()
    online = f"{cfg['doc_host']}{cfg['doc_baseurl']}/"
    pages = sorted(p for p in site.rglob("*.html") if "site_libs" not in p.parts)
    if not pages: sys.exit(f"check_site: no pages in {site}; build the site first (bash tools/docs.sh)")
    failures, ids, links, sidebars = [], {}, {}, {}
    t0 = time.time()
    workers = max(1, min(BROWSERS, os.cpu_count() or 1, len(pages)))
    with ThreadPoolExecutor(workers) as pool:  # a browser per core, each with its share of the pages
        for found in pool.map(lambda share: check_pages(share, site, args, cfg), [pages[i::workers] for i in range(workers)]):
            failures += found[0]; ids.update(found[1]); links.update(found[2]); sidebars.update(found[3])
    failures.sort()  # by page, whichever browser checked it
    if args.shots: screenshots(site, args)
    # links and anchors, across pages
    def resolve(src: str, href: str) -> str | None:
        "A problem with the relative link `href` on page `src`, or None"
        if re.match(r"^[a-z][\w+.-]*:|^//", href, re.I): return None
        path, frag = urldefrag(href)
        target = (site / src).parent / unquote(path) if path else site / src
        target = target.resolve()
        if target.is_dir(): target = target / "index.html"
        if not target.exists(): return f"dead link {href}"
        rel = target.relative_to(site).as_posix() if target.is_relative_to(site) else None
        if frag and rel in ids and unquote(frag) not in ids[rel]: return f"dead anchor {href}"
        return None
    for src, hrefs in links.items():
        for href in sorted(set(hrefs)):
            problem = resolve(src, href)
            if problem: failures.append(f"{src}: {problem}")
    for where, href in site_links(ROOT / "README.md", ROOT / cfg.get("lib_path", "optimi_nb") / "_modidx.py", online):
        problem = resolve("index.html", href)
        if problem: failures.append(f"{where}: {problem.replace('dead', 'no built page for' if 'link' in problem else 'dead')} (online: {online}{href})")
    # navigation: every page in the sidebar; previous/next on every chapter
    listed = {urlparse(h).path for h in sidebars.get("index.html", {}).get("sidebar", [])}
    for name, found in sidebars.items():
        if name != "404.html" and name not in listed: failures.append(f"{name}: not in the sidebar")
        if name != "index.html" and not found["prevnext"]: failures.append(f"{name}: no previous/next links")
    failures += missing_source(ROOT / cfg.get("lib_path", "optimi_nb") / "_modidx.py", {n: f["source"] for n, f in sidebars.items()}, online)
    failures += figures_without_alt({n: f["noAlt"] for n, f in sidebars.items()})
    failures += number_problems({n: f["texts"] for n, f in sidebars.items()}, Path(args.measured or ROOT / cfg.get("nbs_path", "nbs") / "measured.json"))
    failures += snippet_problems({n: f["code"] for n, f in sidebars.items()}, ROOT)
    sections = sidebars.get("index.html", {}).get("sections", [])
    print(f"checked {len(pages)} pages at {args.width} and {args.phone_width} px in {time.time() - t0:.1f} s; sidebar sections: {', '.join(sections) or 'none'}")
    print("outputs and tables that scroll sideways in their own box: " + ", ".join(f"{n} at {w} px" for w, n in Tab.scrolled.items()))
    for f in failures: print("FAIL", f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
