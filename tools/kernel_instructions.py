"""How many GPU instructions a Triton kernel issues per element it updates, counted on a machine without a GPU: the
kernel compiled to a cubin for one GPU (by `tools/triton_check.py`'s worker, with the ptxas the triton wheel bundles),
disassembled with the wheel's nvdisasm, and its SASS instructions counted up to its last EXIT (the out-of-line slow
paths of division and square root after it are left out; both sides of a branch are counted). A kernel that issues N
instructions per element cannot update more elements a second than the GPU issues instructions over N: on an H100 or
H200, 132 SMs × 4 schedulers × 32 lanes × about 1.98 GHz, some 33 × 10¹² a second. Where that bound falls below the
bytes-over-bandwidth floor, the step is bound by its arithmetic, and fewer instructions make it faster.

An element is one point of the kernel's index space: a parameter in most kernels, but a byte of two 4-bit codes in the
4-bit states' kernel, which works by byte pairs. Counted for the kernels whose elements per thread follow from their
launch settings: persistent reductions (XBLOCK rows of R0_BLOCK elements per program) and one-dimensional pointwise
kernels (XBLOCK elements per program), at every setting of XBLOCK and num_warps in a small grid, since a GPU run tunes
them (coordinate descent): the fewest per element is reported. Standard library only; the caller compiles."""
import copy, re

XBLOCKS = {"per": (1, 2, 4, 8), "poi": (256, 512, 1024, 2048)}  # XBLOCK values tried, by kernel kind
WARPS = (1, 2, 4, 8)
INSTRUCTION = re.compile(r"^[-0-9a-f]{2}:[-0-9a-f]:[-0-9a-f]:[-0-9a-fY]:[0-9a-f]\t")  # nvdisasm's control codes, a tab

def main_body_instructions(sass: str) -> int:
    "The SASS instructions of a kernel's body: every instruction line up to its last EXIT"
    lines = sass.splitlines()
    last = max((i for i, line in enumerate(lines) if "EXIT" in line), default=len(lines) - 1)
    return sum(1 for line in lines[:last + 1] if INSTRUCTION.match(line))

def kernel_kind(name: str) -> str | None:
    "'per' (persistent reduction), 'poi' (pointwise) or None (other kinds: combo and looped reductions, not counted)"
    kind = name.split("_")[1] if name.startswith("triton_") else None
    return kind if kind in XBLOCKS else None

def elements_per_thread(kind: str, xblock: int, warps: int, rblock: int) -> float:
    "Elements one thread updates: a program's elements over its 32·warps threads"
    return xblock * (rblock if kind == "per" else 1) / (32 * warps)

def settings(kernel, kind: str):
    "The launch settings to try: each XBLOCK and num_warps, from the kernel's first configuration"
    for xblock in XBLOCKS[kind]:
        for warps in WARPS:
            config = copy.deepcopy(kernel.configs[0])
            config.kwargs["XBLOCK"], config.num_warps = xblock, warps
            yield config

def fewest_per_element(kernel, name: str, source: str, compile_sass) -> tuple[float, str] | None:
    """(instructions per element, its launch setting), the fewest over `settings`, for the loaded Inductor kernel
    `kernel` (`source`: its module's text; `compile_sass(config) -> sass`); None for a kind not counted or a 2-D
    kernel"""
    kind = kernel_kind(name)
    if kind is None or not kernel.configs or "YBLOCK" in kernel.configs[0].kwargs: return None
    rblock = int(re.search(r"R0_BLOCK: tl.constexpr = (\d+)", source).group(1)) if kind == "per" else 1
    counts = []
    for config in settings(kernel, kind):
        per_thread = elements_per_thread(kind, config.kwargs["XBLOCK"], config.num_warps, rblock)
        if per_thread < 1: continue  # threads with nothing to do: not a setting a tuner keeps
        counts.append((main_body_instructions(compile_sass(config)) / per_thread,
                       f"XBLOCK {config.kwargs['XBLOCK']}, {config.num_warps} warps"))
    return min(counts) if counts else None
