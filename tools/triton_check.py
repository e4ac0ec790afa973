"""The GPU code of `compiled=True`, checked on a machine without a GPU.

    python3 tools/triton_check.py [--optimizers AdamW Lion ...] [--precisions fp32 bf16+kahan ...] [--targets 75 80 90] [--whole-blocks] [--instructions] [-v]

For every optimizer that optimi_nb exports (the BaseOptimizer subclasses in `optimi_nb.__all__`, found automatically, but
SOAP, which refuses `compiled=True`) in
every precision (fp32; bf16 and fp16 with Kahan summation; bf16 with stochastic rounding; and, once the optimizers take
`state_precision` / `kahan_precision`, fp32 with int8 state, bf16 with an int8 Kahan compensation, bf16 with both, and bf16
with 4-bit states and the int8 compensation):

1. Inductor writes the Triton kernels of the compiled step. It writes them for CPU tensors here
   (`torch._inductor.config.cpu_backend = "triton"`), patched to be the kernels a CUDA device gets
   (`patch_for_cuda_kernels`): `optimi_nb.kahan.round_to` gives its off-CPU answer (rounding by integer arithmetic on
   the bits; on the CPU it splits), the 4-bit codecs work by byte pairs (`optimi_nb.codecs.by_byte_pairs`; on the CPU
   in a block's order), and the step's 0-dim tensors (lr, the betas...) are read through pointers, as from
   GPU memory, instead of being passed as scalars as Inductor does for 0-dim CPU tensors. Any other function of
   optimi_nb that asks for a tensor's device stops the check until it is listed in DEVICE_CHECKS_KNOWN
   (tools/device_checks.py).
2. Triton compiles each kernel for sm_75 (T4), sm_80 (A100) and sm_90 (H100): `triton.compile(...,
   target=GPUTarget("cuda", cc, 32))`, down to a cubin with the ptxas that the triton wheel bundles. A worker process
   without TRITON_INTERPRET loads each kernel module Inductor wrote with that GPU's properties in place of the CPU's (so
   Inductor's launch heuristics pick the GPU's configurations) and compiles every configuration.
3. The same kernels run in Triton's interpreter (TRITON_INTERPRET=1) on CPU tensors, launched by Inductor's own wrapper
   inside the optimizer's step (a stand-in driver answers the questions Inductor asks a GPU driver). The interpreter's
   fp32 -> bf16 conversion truncates where a GPU rounds to nearest even (triton#10919); it is replaced here by an exact
   round-to-nearest-even conversion through torch, and a kernel that does arithmetic on bf16 values (which the
   interpreter computes on their bit patterns, triton#10919) stops the row instead of giving numbers.

After 5 steps of a two-layer model (two matrices and two vectors in one bucket) the compiled run is compared with the
eager one (`compiled=False`, `foreach=True`: the same buckets). fp32: every weight and state tensor within 1e-6 of the
eager one, relative to its largest value. bf16 and fp16: the fused kernel keeps intermediates in fp32 registers where
the eager foreach ops round to the storage format after each op, so the two differ by roundings of the update (on the
CPU's compiled code as well); they are held to the bound of the notebooks' `check_paths_on`: the compiled weights (and,
with Kahan summation, their exact value θ + kahan_comp) at most twice as far from an fp32 run as the eager ones, +1e-4.
Two updates turn a rounding into more than a rounding, and are held to bounds of their own (see SignFlips and
NewtonSchulzCalls). Lion steps by lr·sign(u): where u is within the two runs' rounding drift of its momentum of zero, the
runs may step in opposite directions; such elements are counted and left out, any other flip fails. Muon orthogonalizes
in bf16, eagerly in both runs (not Triton): in its fp32 row the iteration's inputs must be within one bf16 rounding of
each other, and each weight of a Muon matrix may differ by lr·ratio times the difference of the two runs' outputs. NorMuon
adds those outputs with their rows normalized (Ô): its weights may differ by lr·ratio times Ô's difference, and each row's
second moment by (1-β2) times the difference of the two runs' mean squares of the row, summed over the steps.

With --instructions, each row is followed by its kernels' SASS instructions per element for the newest target, the fewest
over the launch settings a GPU run's tuner tries (tools/kernel_instructions.py): what decides a step whose arithmetic,
not its bytes, bounds it on a GPU.

Each row also counts the fp32 buffers, as large as a state stored in 8- or 4-bit blocks, that the compiled graphs allocate
between their kernels (parsed from Inductor's wrapper code): the check that decode -> update -> encode fused, with no fp32
copy of a state written to memory. It is reported, not held to a bound.

Pinned to torch 2.13.0 and triton 3.9.0: it patches Inductor and Triton internals, and on other versions it stops with
a message rather than check the wrong thing. A missing triton is installed with pip. Prints a table and `N passed, N
failed`; exit status 0 when every row passed. CPU only."""
import argparse, atexit, contextlib, importlib.util, inspect, json, os, re, shutil, subprocess, sys, tempfile, time, traceback, warnings
from pathlib import Path

PINNED = {"torch": "2.13.0", "triton": "3.9.0"}
TARGETS = {75: "sm_75 T4", 80: "sm_80 A100", 90: "sm_90 H100"}
# The GPUs whose properties Inductor's launch heuristics see: SM count, registers per SM, threads per SM
GPU_PROPERTIES = {75: dict(multi_processor_count=40, regs_per_multiprocessor=65536, max_threads_per_multi_processor=1024),
                  80: dict(multi_processor_count=108, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048),
                  90: dict(multi_processor_count=132, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048)}
STEPS = 5
ROOT = Path(__file__).resolve().parent.parent

def arguments() -> argparse.Namespace:
    "The command line, read before triton is imported or installed: `--help` installs nothing"
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--optimizers", nargs="+", help="names from optimi_nb.__all__ (default: every optimizer)")
    parser.add_argument("--precisions", nargs="+", help="fp32 bf16+kahan fp16+kahan bf16+SR ... (default: all)")
    parser.add_argument("--targets", nargs="+", type=int, default=list(TARGETS), choices=list(TARGETS), help="compute capabilities (default: 75 80 90)")
    parser.add_argument("--any-version", action="store_true", help="run on other torch/triton versions than the pinned ones")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every error's traceback and where the kernels' sources are")
    parser.add_argument("--whole-blocks", action="store_true", help="a first matrix of 64 × 64 (16 whole blocks) instead of 70 × 64")
    parser.add_argument("--instructions", action="store_true", help="count each kernel's SASS instructions per element for "
                        "the newest target, the fewest over launch settings (tools/kernel_instructions.py)")
    return parser.parse_args()


WORKER = "--compile-worker" in sys.argv  # the process that compiles for the GPUs (see CompileWorker)
if not WORKER:
    os.environ["TRITON_INTERPRET"] = "1"  # read when triton.jit decorates a kernel: set before anything imports triton
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton_check_")  # every kernel generated afresh
    if "-v" not in sys.argv and "--verbose" not in sys.argv:  # -v prints where the kernels are: keep them
        atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # triton 3.9's default, stated so that it does not warn
sys.path.insert(0, str(ROOT))
ARGS = None if WORKER else arguments()
from device_checks import unknown_device_checks  # tools/, beside this file
import kernel_instructions

if importlib.util.find_spec("triton") is None:
    print(f"triton_check: installing triton=={PINNED['triton']}", flush=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", f"triton=={PINNED['triton']}"], check=True)
    importlib.invalidate_caches()

import numpy as np
import torch
import triton

found = {"torch": torch.__version__.split("+")[0], "triton": triton.__version__}
if found != PINNED and "--any-version" not in sys.argv:
    sys.exit(f"triton_check: written for torch {PINNED['torch']} and triton {PINNED['triton']}, found torch {found['torch']} "
             f"and triton {found['triton']}. It patches Inductor and Triton internals (patch_for_cuda_kernels, "
             "patch_interpreter): check that each still holds for these versions, then update PINNED "
             "(or pass --any-version to try anyway)")

import torch._inductor.config as inductor_config
import torch._inductor.runtime.triton_helpers as triton_helpers
from torch._inductor.codecache import PyCodeCache
from torch._inductor.graph import GraphLowering
from torch._inductor.runtime import triton_heuristics
from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase
from triton.compiler import ASTSource
from triton.language.extra import libdevice
from triton.runtime import interpreter
from triton.runtime.driver import driver

import optimi_nb, optimi_nb.compiled_call
from optimi_nb.base import BaseOptimizer
import optimi_nb.kahan as kahan
import optimi_nb.low_precision as low_precision
import optimi_nb.codecs as codecs

# --- running Inductor's Triton code for CPU tensors in the interpreter -------------------------------------------------

class InterpreterDriver(DriverBase):
    "A stand-in for Triton's GPU driver: there is none on this machine, and the interpreter needs none, but Inductor asks"
    @classmethod
    def is_active(cls): return False
    def map_python_to_cpp_type(self, ty): raise NotImplementedError("the interpreter launches no compiled code")
    def get_current_target(self): return GPUTarget("cuda", 90, 32)  # keys Inductor's cache; compiling names its own target
    def get_active_torch_device(self): return torch.device("cpu")
    def get_benchmarker(self): raise NotImplementedError("nothing is benchmarked: each kernel keeps its first configuration")
    def get_current_device(self): return 0
    def get_current_stream(self, device=None): return 0


def to_bf16_bits(x: np.ndarray) -> np.ndarray:
    "fp32 values to bf16 bit patterns (uint16), rounded to nearest even as a GPU's cvt.rn.bf16.f32 does"
    return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).bfloat16().view(torch.int16).numpy().view(np.uint16)

def from_bf16_bits(x: np.ndarray) -> np.ndarray:
    "bf16 bit patterns (uint16) to fp32 values, exactly"
    return torch.from_numpy(np.ascontiguousarray(x).view(np.int16)).view(torch.bfloat16).float().numpy()


class Bf16ArithmeticError(RuntimeError): pass

def patch_interpreter() -> None:
    "The interpreter's two bf16 defects (triton#10919): conversions round to nearest even; bf16 arithmetic stops the check"
    builder = interpreter.InterpreterBuilder
    cast_impl, binary_op = builder.cast_impl, builder.binary_op
    def cast(self, src, dst_type):
        s, d = src.dtype.scalar, dst_type.scalar
        if s == triton.language.float32 and d == triton.language.bfloat16:
            return interpreter.TensorHandle(to_bf16_bits(src.data), d)
        if s == triton.language.bfloat16 and d == triton.language.float32:
            return interpreter.TensorHandle(from_bf16_bits(src.data), d)
        return cast_impl(self, src, dst_type)
    def binary(self, lhs, rhs, op):
        if triton.language.bfloat16 in (lhs.dtype.scalar, rhs.dtype.scalar):
            raise Bf16ArithmeticError("the kernel computes on bf16 values, which the interpreter does on their bits (triton#10919)")
        return binary_op(self, lhs, rhs, op)
    builder.cast_impl = builder.create_fp_ext = builder.create_fp_trunc = cast
    builder.binary_op = binary
    # libdevice: a GPU kernel's calls are bound to CUDA's library when compiled; in the interpreter they would run the
    # empty stubs of triton.language.extra.libdevice and give None. Those a kernel here may call run on NumPy, the rest fail
    for name, function in vars(libdevice).items():
        if inspect.isfunction(function) and function.__module__ == libdevice.__name__:
            setattr(libdevice, name, on_numpy(name, LIBDEVICE_ON_NUMPY.get(name)))

# CUDA libdevice functions as NumPy element-wise functions (nearbyint rounds half to even, as CUDA's default mode does)
LIBDEVICE_ON_NUMPY = {"nearbyint": np.rint, "rint": np.rint, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "exp": np.exp,
                      "log": np.log, "abs": np.abs, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "signbit": np.signbit,
                      "isnan": np.isnan, "isinf": np.isinf, "pow": np.power, "tanh": np.tanh, "fmax": np.fmax, "fmin": np.fmin}

def on_numpy(name: str, function):
    "libdevice's `name` for the interpreter: `function` on the NumPy arrays behind the kernel's values"
    def run(*args):
        if function is None: raise NotImplementedError(f"libdevice.{name} has no interpreter version here (add it to LIBDEVICE_ON_NUMPY)")
        first = args[0]
        with np.errstate(all="ignore"):
            data = function(*(a.handle.data for a in args))
        if data.dtype != np.bool_: data = data.astype(first.handle.data.dtype)
        scalar = triton.language.int1 if data.dtype == np.bool_ else first.dtype
        shape_type = first.type.with_element_ty(scalar) if hasattr(first.type, "with_element_ty") else scalar
        return triton.language.core.tensor(interpreter.TensorHandle(data, scalar), shape_type)
    run.__name__ = name
    return run


def patch_for_cuda_kernels() -> None:
    "Make Inductor's Triton kernels for CPU tensors the ones a CUDA device gets, and record each kernel and launch"
    driver.set_active(InterpreterDriver())
    triton_helpers.set_driver_to_cpu = lambda: None  # would look for the triton-cpu backend, which the interpreter does not need
    inductor_config.cpu_backend = "triton"
    inductor_config.compile_threads = 1  # in this process, where the patches hold
    inductor_config.fx_graph_cache = False
    # On a GPU only a 0-dim *CPU* tensor becomes a scalar argument; the step's lr and scalars live on the GPU there
    GraphLowering.is_unspec_arg = lambda self, name: False
    # optimi_nb.kahan.round_to splits on the CPU and works on the bits elsewhere: the kernels here are a GPU's
    kahan.round_to = lambda x, dtype: kahan.round_by_bits(x, dtype)
    low_precision.power_of_two = low_precision.power_of_two_by_bits  # ulp's 2^e: by rounding on the CPU, from the bits elsewhere
    codecs.by_byte_pairs = lambda x: True  # 4-bit codes: in order on the CPU, by byte pairs elsewhere
    run = triton_heuristics.CachingAutotuner.run
    def recording_run(self, *args, **kwargs):  # a kernel Inductor reuses from an earlier graph is recorded too
        RECORD["launches"].append(self)
        return run(self, *args, **kwargs)
    triton_heuristics.CachingAutotuner.run = recording_run
    load = PyCodeCache.load_by_key_path.__func__
    def recording_load(cls, key, path, *args, **kwargs):  # a graph's wrapper module: record each run of its `call`
        module = load(cls, key, path, *args, **kwargs)
        call = getattr(module, "call", None)
        if callable(call) and not getattr(call, "recorded", False):
            def recorded(*call_args):
                RECORD["graphs"].append(path)
                return call(*call_args)
            recorded.recorded = True
            module.call = recorded
        return module
    PyCodeCache.load_by_key_path = classmethod(recording_load)

RECORD = {"launches": [], "graphs": []}  # every kernel launch and every run of a graph's wrapper (its path), in order

# An fp32 buffer the wrapper allocates (Inductor writes `bufN = empty_strided_cuda((sizes), (strides), torch.float32)`)
FP32_BUFFER = re.compile(r"^\s*\w+ = empty_strided_\w+\(\(([^()]*)\), \([^()]*\), torch\.float32\)", re.M)

def fp32_buffer_sizes(path: str) -> list[int | None]:
    "The element counts of the fp32 buffers the wrapper at `path` allocates in its `call` (None: a symbolic size)"
    source = Path(path).read_text()
    sizes = []
    for match in FP32_BUFFER.finditer(source.split("def call(", 1)[-1]):
        dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
        sizes.append(None if not all(d.isdigit() for d in dims) else int(np.prod([int(d) for d in dims])))
    return sizes

# --- compiling for the GPUs ---------------------------------------------------------------------------------------------
# In a worker process without TRITON_INTERPRET, where @triton.jit makes compilable kernels. Each kernel module that
# Inductor wrote is loaded as Inductor writes it for a CUDA device: the GPU's properties in place of the CPU's (so that the
# launch heuristics choose the GPU's configurations) and the GPU driver's line in place of the CPU's. Every configuration
# is compiled, as a GPU run compiles them all before timing them.

def cuda_properties(cc: int) -> str:
    return (f"DeviceProperties(type='cuda', index=0, cc={cc}, major={cc // 10}, max_threads_per_block=1024, warp_size=32, "
            + ", ".join(f"{k}={v}" for k, v in GPU_PROPERTIES[cc].items()) + ")")

def load_for_gpu(path: str, name: str, cc: int, numel: int | None = None):
    """The kernel `name` of Inductor's module `path` as Inductor writes it for sm_`cc`, and its module's source; `numel`:
    its elements (xnumel) set to that many, as in a large tensor's kernel"""
    source = Path(path).read_text()
    cpu = re.search(r"DeviceProperties\(type='cpu'[^)]*\)", source)
    if cpu is None: raise RuntimeError("the kernel module has no CPU device properties to replace (has Inductor changed?)")
    source = source.replace(cpu.group(0), cuda_properties(cc)).replace("triton_helpers.set_driver_to_cpu()", "")
    if numel: source = re.sub(r"\bxnumel = \d+\n", f"xnumel = {numel}\n", source)
    namespace = {"__file__": path, "__name__": f"triton_check_{name}_{cc}"}
    exec(compile(source, path, "exec"), namespace)
    return namespace[name], source

def compile_config(kernel, config, cc: int):
    "The compiled kernel (a cubin and its assembly) of one launch configuration of the loaded Inductor `kernel`, for sm_`cc`"
    meta = kernel._create_compile_meta(config)
    options = kernel._create_compile_options(config, meta)
    return triton.compile(ASTSource(kernel.fn, meta["signature"], meta["constants"], meta["configs"][0]),
                          target=GPUTarget("cuda", cc, 32), options=options)

def compile_kernel(path: str, name: str, cc: int) -> tuple[int, int, str | None]:
    "(configurations compiled, configurations, first error or None) for the kernel `name` in Inductor's module `path`, on sm_`cc`"
    compiled = total = 0
    try:
        kernel, _ = load_for_gpu(path, name, cc)
        total = len(kernel.configs)
        for cfg in kernel.configs:
            if not compile_config(kernel, cfg, cc).asm.get("cubin"): return compiled, total, "no cubin produced"
            compiled += 1
        return compiled, total, None
    except Exception as error:
        return compiled, total, f"{type(error).__name__}: {' '.join(str(error).split())[:400]}"

def instructions_per_element(path: str, name: str, cc: int) -> list | str | None:
    """[instructions per element, launch setting]: the fewest over tools/kernel_instructions.py's settings, on sm_`cc`;
    None for a kernel it does not count; the error's message if compiling failed"""
    from triton.tools.disasm import get_sass
    try:
        kernel, source = load_for_gpu(path, name, cc, numel=2**20)  # a large tensor's kernel: 2^20 rows or elements
        fewest = kernel_instructions.fewest_per_element(
            kernel, name, source, lambda config: get_sass(compile_config(kernel, config, cc).asm["cubin"]))
    except Exception as error:
        return f"{type(error).__name__}: {' '.join(str(error).split())[:200]}"
    return list(fewest) if fewest else None

def compile_worker() -> None:
    """Answer each request line with one line of results: {kernels: [[path, name], ...], targets: [cc, ...]}, compile them;
    {instructions: [[path, name], ...], target: cc}, count their instructions per element"""
    driver.set_active(InterpreterDriver())
    for line in sys.stdin:
        request = json.loads(line)
        start = time.process_time()
        if "instructions" in request:
            results = [[path, name, instructions_per_element(path, name, request["target"])]
                       for path, name in request["instructions"]]
        else:
            results = [[path, name, cc, *compile_kernel(path, name, cc)] for path, name in request["kernels"] for cc in request["targets"]]
        print(WORKER_MARK + json.dumps({"results": results, "cpu": time.process_time() - start}), flush=True)

WORKER_MARK = "triton_check_worker: "

class CompileWorker:
    "The worker process, started once"
    def __init__(self):
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        self.process = subprocess.Popen([sys.executable, __file__, "--compile-worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env)
        self.cpu = 0.0  # CPU seconds the worker spent compiling
    def compile(self, kernels: list, targets: list[int]) -> list:
        return self.ask({"kernels": kernels, "targets": targets})
    def instructions(self, kernels: list, target: int) -> list:
        "[path, name, [instructions per element, launch setting] or None] for each kernel, on sm_`target`"
        return self.ask({"instructions": kernels, "target": target})
    def ask(self, request: dict) -> list:
        self.process.stdin.write(json.dumps(request) + "\n"); self.process.stdin.flush()
        for line in self.process.stdout:
            if line.startswith(WORKER_MARK):
                answer = json.loads(line[len(WORKER_MARK):])
                self.cpu += answer["cpu"]
                return answer["results"]
        raise RuntimeError("the compile worker ended")

# --- the cases ----------------------------------------------------------------------------------------------------------

NOT_COMPILED = {"SOAP"}  # optimizers that refuse compiled=True with a ValueError (SOAP: matrix products, eigh and QR)

def optimizer_classes() -> dict[str, type]:
    "Every optimizer optimi_nb exports that takes compiled=True, in its order"
    return {name: getattr(optimi_nb, name) for name in optimi_nb.__all__
            if inspect.isclass(getattr(optimi_nb, name)) and issubclass(getattr(optimi_nb, name), BaseOptimizer)
            and getattr(optimi_nb, name) is not BaseOptimizer and name not in NOT_COMPILED}

def takes(cls, name: str) -> bool:
    return name in inspect.signature(cls.__init__).parameters

def precisions(cls) -> dict[str, dict]:
    "The precisions `cls` is checked in: its dtype and constructor options"
    cases = {"fp32": dict(dtype=torch.float32), "bf16+kahan": dict(dtype=torch.bfloat16), "fp16+kahan": dict(dtype=torch.float16),
             "bf16+SR": dict(dtype=torch.bfloat16, stochastic_rounding=True)}
    if takes(cls, "state_precision"): cases["fp32+int8state"] = dict(dtype=torch.float32, state_precision="int8")
    if takes(cls, "kahan_precision"): cases["bf16+int8kahan"] = dict(dtype=torch.bfloat16, kahan_precision="int8")
    if takes(cls, "state_precision") and takes(cls, "kahan_precision"):  # the headline low-precision setting: 8-bit everything
        cases["bf16+int8"] = dict(dtype=torch.bfloat16, state_precision="int8", kahan_precision="int8")
        cases["bf16+int4"] = dict(dtype=torch.bfloat16, state_precision="int4", kahan_precision="int8")  # 4-bit states, two codes a byte
    return cases

INPUTS = 70  # the first layer's inputs; --whole-blocks makes it 64

def model(dtype: torch.dtype) -> torch.nn.Module:
    """Two linear layers: two matrices (of different shapes) and two vectors, in one bucket; the first matrix is large
    enough for 8-bit state (optimi_nb.storage.MIN_QUANTIZED_NUMEL) and not a whole number of its blocks (70 × 64), or,
    with --whole-blocks, exactly 16 blocks (64 × 64), the case of most real weight matrices"""
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(INPUTS, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).to(dtype)

def make_optimizer(cls, net: torch.nn.Module, compiled: bool, options: dict):
    "`cls` on `net` with weight decay and a larger lr than its default, so that every term of the update is exercised"
    kwargs = {k: v for k, v in options.items() if k != "dtype"} | dict(compiled=compiled, foreach=True)
    if takes(cls, "weight_decay"): kwargs["weight_decay"] = 1e-2
    if issubclass(cls, getattr(optimi_nb, "Muon", ())):  # Muon and NorMuon
        return cls(optimi_nb.muon_param_groups(net), lr=2e-2, **kwargs)  # a Muon group and AdamW groups
    if cls.__name__.startswith("SGD") and takes(cls, "momentum") and "ScheduleFree" not in cls.__name__: kwargs["momentum"] = 0.9
    return cls(net.parameters(), lr=1e-2, **kwargs)

def fp32_deviation(eager_net, compiled_net, eager, compiled, allowed: dict, allowed_state: dict | None = None) -> tuple[float, str]:
    """The largest deviation of a weight or state tensor of the compiled run from the eager one, relative to its largest value;
    of a weight, beyond what `allowed` (by parameter position: an absolute difference per element) allows, and of a state,
    beyond what `allowed_state` (by parameter position, then state name) allows"""
    worst = (0.0, "")
    for i, ((name, pe), pc) in enumerate(zip(eager_net.named_parameters(), compiled_net.parameters())):
        se, sc = eager.state[pe], compiled.state[pc]
        tensors = {"param": (pe, pc)} | {k: (v, sc[k]) for k, v in se.items() if isinstance(v, torch.Tensor) and v.numel() > 1}
        for key, (a, b) in tensors.items():
            if a.dtype != b.dtype or not a.is_floating_point(): d = 0.0 if a.dtype == b.dtype and torch.equal(a, b) else float("inf")
            else:
                margin = allowed.get(i, 0) if key == "param" else (allowed_state or {}).get(i, {}).get(key, 0)
                beyond = (b.double() - a.double()).abs() - margin
                d = beyond.clamp_min(0).max().item() / (a.abs().max().item() or 1.0)
            if d > worst[0] or not worst[1]: worst = (d, f"{name}.{key}")
    return worst

def kahan_compensation(param: torch.Tensor, stored: torch.Tensor) -> torch.Tensor:
    "The Kahan compensation as a tensor like `param`, decoded if stored as an int8 residual"
    if stored.dtype != torch.int8: return stored
    from optimi_nb.codecs import decode_residual
    return decode_residual(stored, param.detach())

def exact_value(p: torch.Tensor, optimizer=None) -> torch.Tensor:
    "The weights in fp64; with `optimizer`, their exact value θ + kahan_comp"
    value = p.detach().double()
    return value if optimizer is None else value + kahan_compensation(p, optimizer.state[p]["kahan_comp"]).double()

def distance(net, reference_net, optimizer=None, left_out: dict = {}) -> float:
    "The weights' distance (2-norm over all of them) from an fp32 run's, without the `left_out` elements; with `optimizer`, of θ + kahan_comp"
    total = 0.0
    for i, (p, r) in enumerate(zip(net.parameters(), reference_net.parameters())):
        difference = exact_value(p, optimizer) - r.double()
        if i in left_out: difference = difference[~left_out[i]]
        total += difference.pow(2).sum().item()
    return total**0.5

# --- updates that a rounding can turn: Lion's sign, Muon's bf16 iteration ------------------------------------------------

def float_spacing(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    "The gap between the two values of `dtype` around each element of `x`, in fp32: two roundings to nearest move them at most this far apart"
    info = torch.finfo(dtype)
    _, exponent = torch.frexp(x.detach().float().abs())  # |x| = mantissa·2^exponent, mantissa in [0.5, 1)
    gap = info.eps * torch.exp2((exponent - 1).float())
    return torch.where(x == 0, 0.0, gap).clamp_min(info.smallest_normal * info.eps)  # below the normal range: the subnormals' gap

def stored_state(optimizer, param: torch.Tensor, name: str) -> tuple[torch.Tensor, torch.Tensor]:
    "The state `name` of `param` in fp32 (zeros before the first step) and the gap between the stored format's values at each element"
    state = optimizer.state[param]
    if name not in state: return torch.zeros_like(param, dtype=torch.float32), float_spacing(torch.zeros_like(param), param.dtype)
    if f"{name}_scale" not in state: return state[name].float(), float_spacing(state[name], state[name].dtype)
    from optimi_nb.codecs import BLOCK_SIZE, BLOCK_SIZE_4BIT, code_bits, decode_signed, unpack_nibbles  # the gap to the neighbouring codes' values, the larger side
    scales = state[f"{name}_scale"]
    if code_bits(state[name], scales) == 8: codes, levels, block = state[name].to(torch.int16), 127, BLOCK_SIZE
    else: codes, levels, block = unpack_nibbles(state[name]).to(torch.int16) - 8, 7, BLOCK_SIZE_4BIT  # 4-bit codes, two a byte
    decoded = lambda c: decode_signed(c.clamp(-levels, levels).to(torch.int8), scales, param, levels, block).float()
    value = decoded(codes)
    return value, torch.maximum(decoded(codes + 1) - value, value - decoded(codes - 1))

# Lion moves every weight by lr·sign(u), u = lerp(g, m, β1). The compiled and eager runs round m differently: each rounds its own
# m to storage every step, the eager foreach lerp rounds u to the gradient's dtype before m moves towards it (the fused kernel
# keeps u in fp32 registers), and the two order their fp32 operations differently. So their m drift apart by roundings, and
# where u is within what that drift makes of it of zero, the two runs take opposite signs and the weight ends 2·lr apart, far
# beyond any bound on roundings. It is the fused kernel's, as on a GPU, not the interpreter's: its fp32 -> bf16 conversions
# round to nearest even here (patch_interpreter). A flip is accepted where the eager u is within that reach of zero, computed
# from the values step by step (the drift d of m obeys d ← β2·d + the step's roundings, as m ← β2·m + (1-β2)·g in both runs,
# and moves u by β1·d); such elements are counted and left out of the row's bounds. Any other flip fails the row.
# The two runs' different fp32 operations: a lerp rounds four times (1-w, the difference, the product, the sum), each by at
# most 2^-24 of |m| + |g| (of |m| + |u| ≤ 2|m| + |g| for m's lerp: half as many units of that), in each of the two runs
FP32_OPERATIONS = 8 * 2.0**-24

class SignFlips:
    "Where the compiled Lion run steps by the other sign than the eager one, and whether the rounding drift of m explains it"
    def __init__(self, eager, compiled):
        self.eager, self.compiled = eager, compiled
        # by parameter position: the bound on |m_eager - m_compiled|, the last step's roundings, the flipped elements
        self.drift, self.last, self.flipped = {}, {}, {}
        self.flips, self.unexplained, self.closest = [], 0, 0.0  # (step, parameter, elements); of them beyond reach; the largest |u|/reach
    def before_step(self, step: int, names: list[str], eager_params: list, compiled_params: list, grads: list) -> None:
        "Compare the signs the two runs are about to take, from their own m and the common gradient"
        for i, (name, pe, pc, g) in enumerate(zip(names, eager_params, compiled_params, grads)):
            beta1, beta2 = next(gr for gr in self.eager.param_groups if any(p is pe for p in gr["params"]))["betas"]
            (m_e, gap_e), (m_c, gap_c) = stored_state(self.eager, pe, "exp_avg"), stored_state(self.compiled, pc, "exp_avg")
            g32 = g.float()
            operations = FP32_OPERATIONS * (m_e.abs() + g32.abs())
            if i in self.last:  # m's drift since: each run's rounding of m, the eager rounding of u (half a gap of the
                # gradient's dtype) times m's weight towards u, (1-β2)/(1-β1), and the operations' roundings
                u_gap, last_operations = self.last[i]
                self.drift[i] = beta2 * self.drift[i] + torch.maximum(gap_e, gap_c) + (1 - beta2) / (1 - beta1) * u_gap / 2 + last_operations
            drift = self.drift.setdefault(i, torch.zeros_like(g32))
            u_e, u_c = torch.lerp(g32, m_e, beta1), torch.lerp(g32, m_c, beta1)  # in fp32, as both runs compute u
            reach = beta1 * drift + operations
            flip = torch.sign(u_e) != torch.sign(u_c)
            if flip.any():
                self.flips.append((step, name, int(flip.sum())))
                self.unexplained += int((flip & (u_e.abs() > reach)).sum())
                self.closest = max(self.closest, (u_e.abs() / reach)[flip].max().item())
                self.flipped[i] = self.flipped.get(i, torch.zeros_like(flip)) | flip
            self.last[i] = (float_spacing(u_e, g.dtype), operations)
    def moved(self, eager_net, compiled_net, exact: bool) -> int:
        "The weights (θ + kahan_comp if `exact`) more than lr apart at the end where no sign flipped: only a flip moves one that far"
        count = 0
        for i, (pe, pc) in enumerate(zip(eager_net.parameters(), compiled_net.parameters())):
            lr = next(gr for gr in self.eager.param_groups if any(p is pe for p in gr["params"]))["lr"]
            apart = (exact_value(pc, self.compiled if exact else None) - exact_value(pe, self.eager if exact else None)).abs() > lr
            count += int((apart & ~self.flipped.get(i, torch.zeros_like(apart))).sum())
        return count
    def note(self) -> str:
        "The flips, where, and how close to zero"
        elements = sum(n for _, _, n in self.flips)
        where = ", ".join(f"{name} step {step + 1}" + (f" ({n})" if n > 1 else "") for step, name, n in self.flips[:4])
        where += ", ..." if len(self.flips) > 4 else ""
        beyond = f", {self.unexplained} beyond it" if self.unexplained else ""
        return (f"Lion: {elements} element(s) took the other sign ({where}), where the eager |u| was at most {self.closest:.2f} times "
                f"the reach of m's rounding drift{beyond}: left out of the bounds")

def newton_schulz_exact(x: torch.Tensor, coefficients, eps: float) -> torch.Tensor:
    "optimi_nb.muon.newton_schulz in fp64: the reference its bf16 rounding error is measured against"
    x = x.double()
    tall = x.size(-2) > x.size(-1)
    if tall: x = x.mT
    x = x / x.norm(dim=(-2, -1), keepdim=True).clamp_min(eps)
    for a, b, c in coefficients:
        gram = x @ x.mT
        x = torch.baddbmm(x, torch.baddbmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.mT if tall else x

# Muon's Newton–Schulz iteration is torch.compiler.disable'd: under compiled=True it runs eagerly between Inductor's graphs, the
# same ATen bf16 bmm/baddbmm calls as the eager step (cuBLAS on a GPU), not Triton and not an extern mm of a graph. The Triton
# kernels around it are fp32 (momentum, Nesterov look-ahead, weight decay, adding the bf16 result), and one stores the
# look-ahead into the iteration's bf16 batch: where the two runs' fp32 look-aheads, equal to fp32 rounding, lie on either side
# of a bf16 rounding boundary, the inputs are one bf16 ULP apart, and the bf16 iteration turns that into a different rounding
# of much of its output, a few bf16 ULPs (within the iteration's own bf16 rounding error, each run's distance from the fp64
# iteration of its input: reported). So in the fp32 row: the inputs must be within one bf16 rounding of each other, and a
# Muon matrix's weights may differ, element by element, by lr·ratio times the sum over the steps of the two outputs'
# difference (the weight decay factor only shrinks an earlier difference), beyond which the fp32 bound holds as elsewhere.
# Element-wise, so a weight whose outputs agreed in every step is held to the fp32 bound alone.
class NewtonSchulzCalls:
    "Muon's Newton–Schulz iterations in the eager and the compiled run: input and output of each, by step"
    def __init__(self): self.calls, self.normalized, self.run, self.step = {}, {}, None, 0
    def __enter__(self):
        import optimi_nb.muon as muon, optimi_nb.normuon as normuon
        self.module, self.normuon, original, original_rows = muon, normuon, muon.newton_schulz, normuon.normalize_rows
        @torch.compiler.disable  # eager, as the function it stands for
        def recorded(x, coefficients, eps):
            out = original(x, coefficients, eps)
            if self.run: self.calls.setdefault((self.run, self.step), []).append((x.clone(), out.clone(), coefficients, eps))
            return out
        def recorded_rows(ortho, second_moment, beta2, eps, adjust_lr_fn):  # NorMuon: what its update adds is Ô, not O
            out = original_rows(ortho, second_moment, beta2, eps, adjust_lr_fn)
            if self.run: self.normalized.setdefault((self.run, self.step), []).append((out.clone(), beta2))
            return out
        self.original, self.original_rows, muon.newton_schulz, normuon.normalize_rows = original, original_rows, recorded, recorded_rows
        return self
    def __exit__(self, *exc): self.module.newton_schulz, self.normuon.normalize_rows = self.original, self.original_rows
    def allowed(self, optimizer, net) -> tuple[dict, dict, list[str], str]:
        "What the outputs' difference allows each Muon matrix and (NorMuon) its rows' second moment, by parameter position; the problems with the inputs; a note"
        matrices = []  # (position, parameter, lr·ratio) of the Muon matrices, in the order the update batches them
        for i, p in enumerate(net.parameters()):
            group = next(gr for gr in optimizer.param_groups if any(q is p for q in gr["params"]))
            if group.get("use_muon"): matrices.append((i, p, group["lr"] * self.module.lr_ratio(p.shape, group["adjust_lr_fn"])))
        allowed = {i: torch.zeros_like(p, dtype=torch.float64) for i, p, _ in matrices}
        allowed_rows = {i: torch.zeros(p.shape[0], dtype=torch.float64) for i, p, _ in matrices}  # NorMuon's second_momentum_buffer
        problems, differing, ulps = [], [], []
        for step in range(STEPS):
            eager, compiled = self.calls.get(("eager", step), []), self.calls.get(("compiled", step), [])
            if len(eager) != len(compiled) or any(xe.shape != xc.shape for (xe, *_), (xc, *_) in zip(eager, compiled)):
                problems.append(f"step {step + 1}: the runs iterate on different batches"); continue
            unmatched = list(matrices)  # a batch holds matrices of one shape, in the bucket's order
            rows_e, rows_c = self.normalized.get(("eager", step)), self.normalized.get(("compiled", step))
            for n, ((xe, oe, coefficients, eps), (xc, oc, _, _)) in enumerate(zip(eager, compiled)):
                gap = torch.maximum(float_spacing(xe, torch.bfloat16), float_spacing(xc, torch.bfloat16))
                if ((xc.float() - xe.float()).abs() > gap).any():
                    problems.append(f"step {step + 1}: Newton–Schulz inputs more than one bf16 rounding apart")
                differing.append(int((xc != xe).sum()))
                members = [m for m in unmatched if (m[1].shape[0], m[1][0].numel()) == tuple(xe.shape[-2:])][:len(xe)]
                if len(members) != len(xe): problems.append(f"step {step + 1}: a batch matches no Muon matrices"); continue
                # NorMuon adds Ô, each row of O over √v: Ô's difference bounds the weights', and v moves by (1-β2)·mean(O²) per row
                added_e, added_c = (rows_e[n][0], rows_c[n][0]) if rows_e and rows_c else (oe, oc)
                for k, ((i, p, lr), o_e, o_c) in enumerate(zip(members, added_e, added_c)):
                    allowed[i] += lr * (o_c.double() - o_e.double()).abs().reshape(p.shape)
                    if rows_e and rows_c:
                        allowed_rows[i] += (1 - rows_e[n][1]) * (oc[k].double().square().mean(-1) - oe[k].double().square().mean(-1)).abs()
                unmatched = [m for m in unmatched if m[0] not in {i for i, _, _ in members}]
                if torch.equal(oe, oc): continue  # the same eager function on the same input
                re, rc = newton_schulz_exact(xe, coefficients, eps), newton_schulz_exact(xc, coefficients, eps)
                ulp = float_spacing(oe.abs().max(), torch.bfloat16).item()  # bf16 ULPs of the output's largest element
                ulps.append([d / ulp for d in ((oc.float() - oe.float()).abs().max().item(), (oe.double() - re).abs().max().item(),
                                                (oc.double() - rc).abs().max().item(), (re - rc).abs().max().item())])
        note = (f"Muon: Newton–Schulz inputs differ in {sum(differing)} element(s) at {sum(1 for d in differing if d)} of "
                f"{len(differing)} iterations, by one bf16 ULP" + "".join(
                    f"; outputs {d:.1f} bf16 ULPs apart (their bf16 errors: {e:.1f} + {c:.1f} ULPs from fp64, whose outputs are "
                    f"{r:.2f} apart)" for d, e, c, r in ulps)
                + f"; the weights may differ by lr·ratio·Σ|ΔO| ({'NorMuon: of Ô, the rows normalized' if any(self.normalized.values()) else 'O, the outputs'}), up to {max(a.max().item() for a in allowed.values()):.1e}")
        if any(a.any() for a in allowed_rows.values()): note += f"; NorMuon's row second moments by (1-β2)·Σ|Δmean(O²)|, up to {max(a.max().item() for a in allowed_rows.values()):.1e}"
        return allowed, {i: {"second_momentum_buffer": a} for i, a in allowed_rows.items()}, problems, note

def run_case(cls, options: dict) -> dict:
    "Eager and compiled-in-the-interpreter steps side by side (and an fp32 eager run for low precision): kernels, launches, deviations"
    dtype = options["dtype"]
    torch._dynamo.reset()
    first_launch = len(RECORD["launches"])
    eager_net, compiled_net = model(dtype), model(dtype)
    eager, compiled = make_optimizer(cls, eager_net, False, options), make_optimizer(cls, compiled_net, True, options)
    lossy = dtype != torch.float32 or any(v in ("int8", "int4") for v in options.values())
    if lossy:  # the reference of the low-precision runs: fp32 from the same (rounded) start, with the same gradients
        fp32_net = model(dtype).float()
        fp32 = make_optimizer(cls, fp32_net, False, {"dtype": torch.float32})
    calls = []
    run_compiled = compiled._run_compiled
    compiled._run_compiled = lambda *args, **kwargs: (calls.append(1), run_compiled(*args, **kwargs))[-1]
    per_step = []
    signs = SignFlips(eager, compiled) if cls is getattr(optimi_nb, "Lion", None) else None
    newton_schulz = NewtonSchulzCalls() if issubclass(cls, getattr(optimi_nb, "Muon", ())) and not lossy else None  # and NorMuon
    names = [name for name, _ in eager_net.named_parameters()]
    with warnings.catch_warnings(record=True) as caught, newton_schulz or contextlib.nullcontext():
        warnings.simplefilter("always")
        for step in range(STEPS):
            generator = torch.Generator().manual_seed(step)
            grads = [torch.randn(p.shape, generator=generator).to(dtype) for p in eager_net.parameters()]
            for net in (eager_net, compiled_net) + ((fp32_net,) if lossy else ()):
                for p, g in zip(net.parameters(), grads): p.grad = g.to(p.dtype, copy=True)
            if signs: signs.before_step(step, names, list(eager_net.parameters()), list(compiled_net.parameters()), grads)
            if newton_schulz: newton_schulz.run, newton_schulz.step = "eager", step
            eager.step()
            if lossy: fp32.step()
            launches, before, graphs = len(RECORD["launches"]), len(calls), len(RECORD["graphs"])
            if newton_schulz: newton_schulz.run = "compiled"
            compiled.step()
            if newton_schulz: newton_schulz.run = None
            per_step.append((len(RECORD["launches"]) - launches, len(calls) - before, RECORD["graphs"][graphs:]))
    fell_back = [str(w.message) for w in caught if "compiled=True" in str(w.message)]
    if compiled._compile_failed or fell_back or not calls:
        raise RuntimeError(f"the compiled step ran eagerly: {fell_back[:1] or 'no compiled call'}")
    kernels = list(dict.fromkeys(RECORD["launches"][first_launch:]))  # each kernel once, in launch order
    # "No fp32 copy of a state written to memory": the fp32 buffers, as large as a block-quantized state at least, that the
    # wrappers of the graphs run in a step allocate (None where no state is block-quantized)
    quantized = [p.numel() for p in compiled_net.parameters() if any(k.endswith("_scale") for k in compiled.state[p])]
    if options.get("state_precision") in ("int8", "int4") and not quantized: raise RuntimeError("no state was stored in blocks")
    large = lambda path: sum(1 for n in fp32_buffer_sizes(path) if n is None or n >= min(quantized))
    wrappers = list(dict.fromkeys(g for *_, graphs in per_step for g in graphs))
    per_step = [(n, c, sum(large(g) for g in graphs) if quantized else None) for n, c, graphs in per_step]
    result = dict(kernels=[[k.filename, k.inductor_meta["kernel_name"]] for k in kernels], per_step=per_step, checks={}, notes=[],
                  wrappers=wrappers)
    kahan = "kahan_comp" in next(iter(eager.state.values()))
    left_out = signs.flipped if signs else {}  # the elements where Lion's sign flipped, within rounding of zero
    if signs:
        moved = signs.moved(eager_net, compiled_net, exact=kahan)
        result["checks"]["signs"] = (signs.unexplained, f"{signs.unexplained} sign flip(s) of Lion's update beyond the rounding drift of m", 0)
        result["checks"]["moved"] = (moved, f"{moved} weight(s) more than lr from the eager run's without a sign flip", 0)
        if signs.flips: result["notes"].append(signs.note())
    if not lossy:
        allowed = {i: torch.where(mask, torch.inf, 0.0) for i, mask in left_out.items()}  # a flipped weight: any difference
        allowed_state = {}
        if newton_schulz:
            muon, allowed_state, problems, note = newton_schulz.allowed(compiled, compiled_net)
            allowed |= muon
            result["checks"]["ns"] = (len(problems), "; ".join(problems), 0)
            if any(a.any() for a in allowed.values()): result["notes"].append(note)
        deviation, tensor = fp32_deviation(eager_net, compiled_net, eager, compiled, allowed, allowed_state)
        result["checks"]["fp32"] = (deviation, tensor, BOUNDS["fp32"])
        result["marked"] = any(a.any() for a in allowed.values())
    else:
        d_compiled, d_eager = distance(compiled_net, fp32_net, left_out=left_out), distance(eager_net, fp32_net, left_out=left_out)
        result["checks"]["weights"] = (d_compiled, f"weights {d_compiled:.2e} from fp32, eager's {d_eager:.2e}", 2 * d_eager + 1e-4)
        if kahan:
            s_compiled, s_eager = distance(compiled_net, fp32_net, compiled, left_out), distance(eager_net, fp32_net, eager, left_out)
            result["checks"]["θ+k"] = (s_compiled, f"θ+kahan_comp {s_compiled:.2e} from fp32, eager's {s_eager:.2e}", 2 * s_eager + 1e-4)
    return result

# The bound on the plain fp32 run's deviation from the eager one; the low-precision runs' bound is the notebooks'
# check_paths_on's: as close to an fp32 run as the eager step is, within twice its distance (+1e-4)
BOUNDS = {"fp32": 1e-6}

def compile_as_for_cuda(verbose: bool) -> None:
    "Compile the step with the options a CUDA device gets (combo kernels), for the CPU tensors standing in for it; `verbose`: print the traceback of an error, which the optimizer turns into a warning and the eager step"
    # through torch.compile, whose compiled function this replaces (compiled calls pick their options by device)
    optimi_nb.compiled_call.CompiledCalls.direct_calls = False
    make = optimi_nb.compiled_call.compiled_update_core
    def traced(*args, **kwargs):
        try: return make("cuda", any(isinstance(t, torch.Tensor) and not t.is_floating_point()
                                     for t in torch.utils._pytree.tree_leaves(args)))(*args, **kwargs)
        except Exception:
            if verbose: traceback.print_exc()
            raise
    optimi_nb.compiled_call.compiled_update_core = lambda device_type, codes=False: traced

def runs_eagerly(dtype: torch.dtype, cc: int) -> bool:
    "Whether the optimizer runs the eager step instead of the compiled one on a GPU of compute capability `cc` (bf16 on a T4)"
    return optimi_nb.low_precision.inductor_refuses(dtype, (cc // 10, cc % 10))

# --- the table ----------------------------------------------------------------------------------------------------------

def main() -> int:
    args = ARGS
    global INPUTS
    if args.whole_blocks: INPUTS = 64
    unknown = unknown_device_checks()
    if unknown:
        print("triton_check: optimi_nb tests the device in code this check does not know; decide whether the compiled step "
              "reaches it and make the check give it a CUDA device's answer (as round_to):\n  " + "\n  ".join(unknown))
        return 2
    patch_for_cuda_kernels(); patch_interpreter()
    compile_as_for_cuda(args.verbose)
    classes = optimizer_classes()
    for name in args.optimizers or []:
        if name not in classes: parser.error(f"unknown optimizer {name!r}; optimi_nb exports {', '.join(classes)}")
    worker = CompileWorker()
    print(f"triton_check: torch {torch.__version__}, triton {triton.__version__}: the Triton kernels Inductor writes for "
          f"compiled=True, compiled for {', '.join(TARGETS[t] for t in args.targets)} and run in Triton's interpreter against "
          f"the eager step ({STEPS} steps of a 4-tensor model, its first matrix {INPUTS} × 64)", flush=True)
    targets = "".join(f" {TARGETS[t].split()[0]:>6}" for t in args.targets)
    width = max(len(name) for name in ["optimizer", *classes])
    header = (f"{'optimizer':<{width}} {'precision':<15} {'kernels':>7} {'calls':>5} {'fp32 bufs':>9}{targets} {'fp32 dev':>9} "
              f"{'w:eager':>9} {'θ+k:eager':>9}  result")
    print(header); print("-" * len(header), flush=True)
    passed = failed = 0
    failures, started, started_cpu = [], time.time(), time.process_time()
    for name, cls in classes.items():
        if args.optimizers and name not in args.optimizers: continue
        for precision, options in precisions(cls).items():
            if args.precisions and precision not in args.precisions: continue
            case_start, case_cpu, worker_cpu = time.time(), time.process_time(), worker.cpu
            try:
                result = run_case(cls, options)
                compiled = worker.compile(result["kernels"], args.targets)
            except Exception as error:
                failed += 1
                message = f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
                failures.append(f"{name} {precision}: {message}")
                print(f"{name:<{width}} {precision:<15} FAILED  {message}", flush=True)
                if args.verbose: traceback.print_exc()
                continue
            cells, errors = [], []
            for cc in args.targets:
                rows = [r for r in compiled if r[2] == cc]
                eager_there = runs_eagerly(options["dtype"], cc)
                cells.append(f"{sum(r[3] for r in rows)}/{sum(r[4] for r in rows)}" + ("*" if eager_there else ""))
                errors += [f"{r[1]} for sm_{cc}: {r[5]}" for r in rows if r[5]]
            checks = result["checks"]
            over = [f"{what} (bound {bound:.2e})" for value, what, bound in checks.values() if not value <= bound]
            good = not over and not errors and result["kernels"]
            passed, failed = passed + bool(good), failed + (not good)
            problems = over + errors + ([] if result["kernels"] else ["no Triton kernel was generated"])
            failures += [f"{name} {precision}: {p}" for p in problems]
            launches = "/".join(map(str, sorted({n for n, _, _ in result["per_step"]})))
            calls = "/".join(map(str, sorted({c for _, c, _ in result["per_step"]})))
            buffers = "/".join(map(str, sorted({b for _, _, b in result["per_step"] if b is not None}))) or "-"
            def cell(key):
                value, _, bound = checks[key]
                if key == "fp32": return f"{value:.1e}" + ("†" if result.get("marked") else "")
                return f"{value / ((bound - 1e-4) / 2):.2f}" if bound > 1e-4 else f"{value:.0e}:0"
            print(f"{name:<{width}} {precision:<15} {launches:>7} {calls:>5} {buffers:>9}" + "".join(f" {c:>6}" for c in cells)
                  + "".join(f" {cell(k) if k in checks else '-':>9}" for k in ("fp32", "weights", "θ+k"))
                  + f"  {'ok' if good else 'FAILED'} ({time.time() - case_start:.0f} s, "
                  f"CPU {time.process_time() - case_cpu + worker.cpu - worker_cpu:.0f} s)", flush=True)
            for note in result["notes"]: print(f"    {note}")
            if args.instructions:
                for _, kernel, fewest in worker.instructions(result["kernels"], max(args.targets)):
                    counted = (f"{fewest[0]:.1f} ({fewest[1]})" if isinstance(fewest, list) else fewest
                               or "not counted (a combo, looped or 2-D kernel)")
                    print(f"    sm_{max(args.targets)} instructions per element: {counted}  {kernel[:60]}")
            if args.verbose:
                for path, kernel in result["kernels"]: print(f"    {kernel}: {path}")
                for path in result["wrappers"]: print(f"    wrapper: {path}")
    print(f"\nkernels: Triton kernels launched per optimizer step; calls: compiled update calls per step (one per bucket of tensors "
          f"sharing a device, dtype and step; one per tensor under stochastic rounding). fp32 bufs: fp32 buffers per step that the "
          f"compiled graphs' wrappers allocate (empty_strided with torch.float32) with at least as many elements as the smallest "
          f"tensor whose state is stored in 8- or 4-bit blocks: an fp32 copy of a state written to memory between kernels, where "
          f"decode -> update -> encode did not fuse into one pass (reported, not a failure; -: no state in blocks). sm_XX: launch configurations compiled "
          f"to a cubin for that GPU / configurations Inductor gave the kernels. After {STEPS} steps: fp32 dev: the compiled "
          f"weights' and state's largest deviation from the eager step's, relative to each tensor's largest value (bound "
          f"{BOUNDS['fp32']:g}); w:eager, θ+k:eager: the low-precision compiled run's distance from an fp32 run over the eager "
          f"run's (of the weights, and of their exact value θ + kahan_comp), the bound of the notebooks' check_paths_on: "
          f"at most 2 (+1e-4 absolute). †: beyond what the note under the row allows some weights: a Muon matrix, lr·ratio "
          f"times the difference of the bf16 Newton–Schulz outputs (the iteration runs eagerly in both runs; its inputs must "
          f"be within one bf16 rounding); Lion, the elements that took the other sign where u was within the rounding drift "
          f"of m of zero, counted and left out of the bounds (any other flip fails). *: the kernels compile for this GPU, "
          f"but Inductor declines bf16 graphs below compute "
          f"capability 8.0 (pytorch#129288), so there the optimizer runs the eager step (optimi_nb.low_precision.inductor_refuses). {time.time() - started:.0f} s in all "
          f"(CPU: {time.process_time() - started_cpu + worker.cpu:.0f} s).")
    for line in failures: print("FAILED", line)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    if WORKER: compile_worker()
    else: sys.exit(main())
