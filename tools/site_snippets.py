"""Run the Python code a reader copies from the site: every block of the front page and of each section headed Usage or
Quick start (and its subsections), a page's blocks in order in one fresh python3, as a reader pasting the page top to
bottom would, so a block may use what the blocks above it defined.

A block that calls a test helper (test_eq, test_close, ...) among example code fails, unless KNOWN lists it; a block of
test helper calls alone is the page's test of the example above it, and is not run. A block that mentions cuda needs a GPU, and is not
run (listed). Used by check_site.py on the code blocks of every built page."""
import ast, json, os, re, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

USAGE = re.compile(r"usage|quick start", re.I)  # the headings of the sections a reader copies from
TIMEOUT = 30  # seconds a block may take
MARK = "@@check_site block "
# (page, first line of a block) that calls a test helper among example code, known and not yet fixed: not run
KNOWN = [
]
# execs the blocks it reads on stdin in one namespace, printing MARK and the block's number before each
RUNNER = f"""import json, sys
env = {{"__name__": "__main__"}}
for i, code in enumerate(json.load(sys.stdin)):
    print({MARK!r} + str(i), flush=True)
    exec(compile(code, f"<block {{i}}>", "exec"), env)"""


def usage_blocks(page: str, code: list[dict]) -> list[tuple[str, str]]:
    "The blocks of `code` (code, headings of the sections it is in) that a reader of `page` copies, as (code, 'under heading: first line')"
    return [(c["code"], f"under '{(c['headings'] or ['?'])[0].strip()}': {c['code'].strip().splitlines()[0] if c['code'].strip() else ''!r}")
            for c in code if page == "index.html" or any(USAGE.search(h) for h in c["headings"])]


def test_calls(code: str) -> tuple[set[str], bool]:
    "The test helpers `code` calls, and whether it is nothing but calls to them"
    tree = ast.parse(code)
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id.startswith("test_")}
    alone = all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and getattr(s.value.func, "id", "").startswith("test_") for s in tree.body)
    return called, bool(tree.body) and alone


def run_blocks(blocks: list[str], root: Path) -> tuple[int, str] | None:
    """Run `blocks` in order in one fresh python3 (in a scratch folder, the library of `root` first on the path); None, or
    the failing block's number and the error (the block's line that raised it, and the error's last line)"""
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory(prefix="check_site_snippet_") as cwd:
        try:
            r = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(blocks), capture_output=True, text=True, cwd=cwd, env=env,
                               timeout=TIMEOUT * len(blocks))
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else e.stdout or ""
            return last_block(out), f"still running after {TIMEOUT * len(blocks)} s"
    if r.returncode == 0: return None
    i, lines = last_block(r.stdout), [line for line in r.stderr.splitlines() if line.strip()] or [f"exit status {r.returncode}"]
    at = re.findall(rf'File "<block {i}>", line (\d+)', r.stderr)
    return i, (f"line {at[-1]} {blocks[i].splitlines()[int(at[-1]) - 1].strip()!r}: " if at else "") + lines[-1]


def last_block(stdout: str) -> int:
    "The number of the last block the runner started"
    return int(([line.removeprefix(MARK) for line in stdout.splitlines() if line.startswith(MARK)] or ["0"])[-1])


def snippet_problems(pages: dict[str, list[dict]], root: Path) -> list[str]:
    "Failures for the blocks of `pages` (page: its code blocks) that a reader copies and that fail as copied"
    out, runs, tests, known, gpu, t0 = [], [], 0, 0, [], time.time()
    for page, code in sorted(pages.items()):
        blocks, where = [], []
        for block, at in usage_blocks(page, code):
            try: called, alone = test_calls(block)
            except SyntaxError as e: out.append(f"{page}: a usage block does not parse ({e.msg}, line {e.lineno}), {at}"); continue
            if alone: tests += 1
            elif called and (page, block.strip().splitlines()[0]) in KNOWN: known += 1
            elif called: out.append(f"{page}: a usage block calls {', '.join(sorted(called))} among its example code, {at}")
            elif "cuda" in block: gpu.append(f"{page} {at}")
            else: blocks.append(block); where.append(at)
        if blocks: runs.append((page, blocks, where))
    ran = sum(len(blocks) for _, blocks, _ in runs)
    with ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:  # a fresh python3 per page, one per core
        for (page, blocks, where), failed in zip(runs, pool.map(lambda run: run_blocks(run[1], root), runs)):
            if failed: out.append(f"{page}: usage block {failed[0] + 1} of {len(blocks)} fails as copied, {where[failed[0]]}: {failed[1]}")
    print(f"usage snippets: ran {ran} blocks in {time.time() - t0:.1f} s; {tests} blocks of test helpers alone and {known} known to call them (KNOWN) not run" +
          (f"; not run, needing a GPU: {', '.join(gpu)}" if gpu else ""))
    return out
