"""Open every page of the built site in headless Chromium, from disk (file://), and fail on what a reader would meet.

Checks, on each page: no console error or uncaught exception, no failed or off-machine request, no KaTeX error or
unrendered maths, every image loaded, no API signature or parameter table wider than its column, no raw Markdown in
the rendered text; across the site: every relative link and anchor resolves, every README link to the site and every
doc link in optimi_nb/_modidx.py resolves to a built page and anchor, every page is in the sidebar, and a search for
"kahan" returns readable results. Needs Debian's `chromium` (apt-get install chromium); talks to it over the DevTools
pipe, so no Python package beyond the standard library. Exit status 1 on any failure.

Usage: python3 tools/check_site.py [--site _docs] [--shots DIR [--shot-pages index base ...]] [--width 1400]"""
import argparse, json, os, queue, re, shutil, subprocess, sys, tempfile, threading, time
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

ROOT = Path(__file__).resolve().parents[1]
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
  // API docs: a signature or parameter table must fit its column (no sideways scrolling, nothing clipped)
  const col = main.getBoundingClientRect();
  document.querySelectorAll(".cell-output-markdown pre, .cell-output-markdown table").forEach(e => {
    const r = e.getBoundingClientRect();
    if (!r.width) return;
    const head = e.closest(".cell-output-markdown").querySelector("h2,h3,h4");
    const name = head ? "API doc of " + head.textContent : "result table";
    if (e.scrollWidth > e.clientWidth + 1) out.problems.push(`${name}: ${e.tagName.toLowerCase()} is ${e.scrollWidth} px wide in a ${e.clientWidth} px box`);
    if (r.right > col.right + 1) out.problems.push(`${name}: ${e.tagName.toLowerCase()} runs ${Math.round(r.right - col.right)} px past the column`);
  });
  // raw Markdown in rendered prose (a link or emphasis that was not converted); code is left alone
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {acceptNode: n =>
    n.parentElement.closest("code, pre, script, style, .katex") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  for (let n; (n = walker.nextNode());) {
    const m = n.textContent.match(/\[[^\]\n]+\]\((https?:|[\w.-]+\.(html|ipynb))[^)\s]*\)|\{target=|(^|\s)\*\*\S[^*]*\*\*(\s|$)/);
    if (m) out.problems.push("raw Markdown in the text: " + m[0].slice(0, 100));
  }
  // superscript that is not a footnote: Pandoc's ^...^ eating a formula such as b^(t-1)/(1-b^t)
  main.querySelectorAll("sup").forEach(s => { if (!s.closest(".footnote-ref, a")) out.problems.push("stray superscript: " + s.textContent.slice(0, 60)); });
  out.sidebar = Array.from(document.querySelectorAll("#quarto-sidebar a.sidebar-link[href]")).map(a => a.getAttribute("href"));
  out.sections = Array.from(document.querySelectorAll("#quarto-sidebar .sidebar-item-section > .sidebar-item-container .menu-text")).map(e => e.textContent);
  out.prevnext = Array.from(document.querySelectorAll(".page-navigation a")).map(a => a.getAttribute("href"));
  return out;
})()"""

SEARCH = r"""(async () => {
  const input = document.querySelector(".smalldocs-search input");
  if (!input) return {error: "no search box"};
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
          none: !!document.querySelector(".smalldocs-search-results .search-none")};
})()"""


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default=None, help="the built site (default: doc_path of settings.ini, _docs)")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=1000)
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
    browser = Chromium(args.width, args.height)
    t0 = time.time()
    try:
        for page in pages:
            name = page.relative_to(site).as_posix()
            tab = Tab(browser)
            tab.goto(page.as_uri())
            found = tab.js(INSPECT)
            tab.pump()
            failures += [f"{name}: {p}" for p in tab.problems + found["problems"]]
            ids[name], links[name], sidebars[name] = set(found["ids"]), found["links"], found
            if name == "index.html":
                r = tab.js(SEARCH.replace("QUERY", json.dumps("kahan")))
                if r.get("error") or not r["n"]: failures.append(f"search: 'kahan' finds nothing ({r})")
                elif r["contrast"] < 4.5: failures.append(f"search: results are hard to read, text contrast {r['contrast']:.1f}:1 (< 4.5)")
                else: print(f"search 'kahan': {r['n']} results, first {r['first'][:3]}, text contrast {r['contrast']:.1f}:1")
                if args.shots:
                    Path(args.shots).mkdir(parents=True, exist_ok=True)
                    tab.screenshot(Path(args.shots) / "search.png")
            tab.close()
        if args.shots:
            Path(args.shots).mkdir(parents=True, exist_ok=True)
            for spec in args.shot_pages:
                stem, _, sel = spec.partition("@")
                tab = Tab(browser)
                tab.goto((site / f"{stem}.html").as_uri())
                tab.pump()
                suffix = "_" + re.sub(r"\W+", "_", sel).strip("_") if sel else ""
                tab.screenshot(Path(args.shots) / f"{stem}{suffix}.png", sel or None)
                tab.close()
    finally:
        browser.close()
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
    sections = sidebars.get("index.html", {}).get("sections", [])
    print(f"checked {len(pages)} pages in {time.time() - t0:.1f} s; sidebar sections: {', '.join(sections) or 'none'}")
    for f in failures: print("FAIL", f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
