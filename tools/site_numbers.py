"""The measured figures that several pages quote, checked against nbs/measured.json, where each is stored once.

A sentence or table row that names a figure (FIGURES: what it must and must not say) and holds a number written as that
figure is written, within NEAR of its stored value but not equal to it (nor to another figure the same sentence names),
is a stale copy: a failure, unless EXCEPTIONS explains it. Numbers far from the figure are other figures the sentence
quotes beside it, and are left alone. Used by check_site.py on the text of every built page."""
import json, re
from pathlib import Path

NEAR = 0.1  # a number within 10% of a figure it is quoted beside is taken for a copy of it
OTHERS = r"\b(SGD|Lion|Adan|Muon|RAdam|Ranger|StableAdamW)\b"  # sentences about another optimizer quote its own figures
AdamW = ("memory", "AdamW")
# (regexes a sentence or row must all match, a regex it must not match (case-insensitive), the keys of the figure in
# measured.json, the figure as pages write it): AdamW's peak bytes per parameter, the 8-bit step's time against the
# compiled bf16 + Kahan step's, the optimizer's checkpoint in MB, and two designs not taken (design_trials.py)
FIGURES = [
    (("int8|8-bit",), OTHERS, (*AdamW, "bf16 + int8 states + int8 residual", "total"), "{:.2f}"),
    (("release",), OTHERS, (*AdamW, "bf16 + int8 states + int8 residual, gradient release", "total"), "{:.2f}"),
    (("bf16", "Kahan"), OTHERS + "|accumulation", (*AdamW, "bf16 + Kahan", "total"), "{:.2f}"),
    (("bf16", "release"), OTHERS, (*AdamW, "bf16 + Kahan, gradient release", "total"), "{:.2f}"),
    (("fp32", "release"), OTHERS, (*AdamW, "fp32, gradient release", "total"), "{:.2f}"),
    (("fp32",), OTHERS + "|mixed", (*AdamW, "fp32", "total"), "{:.2f}"),
    (("compiled",), "", ("speed_8bit", "int8 states + int8 residual, compiled", "ratio"), "{:.1f}×"),
    (("eager|foreach",), "", ("speed_8bit", "int8 states + int8 residual, foreach", "ratio"), "{:.1f}×"),
    (("checkpoint|MB",), "", ("checkpoint", "bf16 + int8 states + int8 residual", "optimizer_mb"), "{:.1f} MB"),
    (("checkpoint|MB", "Kahan"), "", ("checkpoint", "bf16 + Kahan", "optimizer_mb"), "{:.1f}"),
    (("emulate_precision_casts",), "", ("design_trials", "rows", "precision casts", "ratio"), "{:.1f}"),
    (("symbolic",), "", ("design_trials", "rows", "dynamic shapes", "ratio"), "{:.1f}"),
]
# (page, words of the sentence or row around the number): a figure quoted on purpose with another value
EXCEPTIONS = [
    # the compiled 8-bit step's history: its ratio measured alone before the eager slices changed, and before two earlier changes
    ("8bit_states.html", "measured at 5.7× alone"),
    ("8bit_states.html", "from 79× to 5.7×"),
    # the arithmetic of the 8-bit budget (1 + 4/256 bytes a moment), not a measurement
    ("8bit_states.html", "total 10 7.03 (5.03 with gradient release)"),
    # a GPU's peaks: the CUDA allocator's on an H200, a measurement of its own beside MemTracker's on the CPU
    ("gradient_release.html", "The output above is from one run on an NVIDIA H200"),
    ("memory.html", "; CPU "),  # the GPU cell's lines: eager and compiled peaks beside MemTracker's
    ("memory.html", "Gradient release lowers the peak in every storage on both paths"),  # the H200's peaks, quoted
    # a GPU training step's resident bytes per parameter (weights and states between steps, the CUDA allocator's, a GPT
    # of 168M parameters), beside its peak: benchmarks/gpu_step.py's table, not the memory lab's peak
    ("speed.html", "FlashOptim, gradient release"),
    ("speed.html", "optimi_nb int8 compiled, gradient release"),
    ("speed.html", "FlashOptim, no release"),
    ("speed.html", "optimi_nb int8 compiled, no release"),
    ("speed.html", "optimi_nb bf16 + Kahan compiled, no release"),
    # the same table's step times in ms, quoted in prose beside the words of the memory figures
    ("speed.html", "Without release the int8 step takes"),
    ("changelog.html", "(17.86 ms unrecorded, 12.54 replayed"),
    # the memory lab's model measured by low_precision's own harness, which leaves the input batch out (0.004 B/param)
    ("low_precision.html", "bf16 + Kahan 0.0040 6.00 10.00"),
    # distances from fp32 in % and movements in learning rates, beside the words of the memory figures
    ("4bit_states.html", "digits: fp32 + int4 states"),
    ("4bit_states.html", "silent elements moved"),
    ("changelog.html", "learning rates over 250 silent steps"),
    # the eager bf16 + Kahan step's time and ratio in the CPU speed table
    ("8bit_states.html", "bf16 + Kahan, foreach"),
]


def sentences(text: str) -> list[str]:
    "The sentences of a paragraph or list item, or a table row or output line whole, whitespace collapsed"
    out = []
    for line in text.splitlines():
        out += [re.sub(r"\s+", " ", s).strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(“\"])", line)]
    return [s for s in out if s]


def written(fmt: str, value: float) -> str:
    "The number as `fmt` writes it, without the unit: '6.0' for '{:.1f}×' and 6.03"
    return re.search(r"\d+(\.\d+)?", fmt.format(value))[0]


def numbers(fmt: str, sentence: str) -> list[str]:
    "The numbers in `sentence` written as `fmt` (such as '{:.1f}×') writes them, without the unit"
    decimals = int(re.search(r"\{:\.(\d)f\}", fmt)[1])
    before, after = (re.escape(part) for part in re.split(r"\{:\.\df\}", fmt))
    number = r"\d+\.\d{%d}" % decimals if decimals else r"\d+"
    return re.findall(rf"(?<![\d.]){before}({number}){after}(?!\d|e[-+]?\d)", sentence)


def stale(page: str, sentence: str, figures: list[tuple]) -> list[str]:
    "A failure for each number in `sentence` near a figure it names but equal to none of them"
    named = [(keys, fmt, value) for musts, never, keys, fmt, value in figures
             if all(re.search(m, sentence, re.I) for m in musts) and not (never and re.search(never, sentence, re.I))]
    if not named or any(page == p and words in sentence for p, words in EXCEPTIONS): return []
    quoted = {written(fmt, value) for _, fmt, value in named}
    return [f"{page}: {fmt.format(float(n))} where the stored {' > '.join(keys)} is {fmt.format(value)}, in {sentence[:300]!r}"
            for keys, fmt, value in named for n in numbers(fmt, sentence) if n not in quoted and abs(float(n) - value) <= NEAR * value]


def number_problems(pages: dict[str, list[str]], measured: Path) -> list[str]:
    "Failures for figures of FIGURES that `pages` (page: its texts) quote with another value than `measured` stores"
    stored = json.loads(measured.read_text())
    figures = []
    for musts, never, keys, fmt in FIGURES:
        value = stored
        for k in keys: value = value[k]
        figures.append((musts, never, keys, fmt, value))
    out = []
    for page, texts in sorted(pages.items()):
        for text in texts:
            out += [p for s in sentences(text) for p in stale(page, s, figures) if p not in out]
    return out
