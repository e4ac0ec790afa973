"""How few instructions a single kernel for the int4 AdamW step would issue: a trial written by hand, not the library's.

The compiled int4 step takes two Inductor kernels, 243 sm_90 instructions per parameter (the Speed chapter, *Bound by
instructions*), which bounds it at 0.34 of the bytes-over-bandwidth floor on an H100 or H200. This Triton kernel does
the same step in one pass, each value computed once: per block of 128 weights it loads the weights, gradients and int8
residual, unpacks the two states' 4-bit codes, decodes them, updates the moments, decays and steps into the
compensation, commits it to the bf16 weights, encodes the residual and the states (each block's new scale a reduction in
registers) and packs the codes again. It follows the library's formulas (chapter Codecs, and `update_core` for AdamW
with the int8 residual) but not its roundings of every intermediate to bf16, so it is a measure of what one kernel could
reach, not a replacement: issue #40 allows a kernel written by hand only where a chapter derives it and a test holds
it bit for bit against `update_core`.

    python3 benchmarks/int4_kernel_trial.py --count   # sm_90 SASS instructions per parameter, with each kind of
                                                      # division, the fewest over launch settings
    python3 benchmarks/int4_kernel_trial.py --check   # in Triton's interpreter: 5 steps, each against optimi_nb's
                                                      # eager step from the same weights and states
    python3 benchmarks/int4_kernel_trial.py --time [--rounds 15] [--record]   # on a GPU: of the floor, 8 x 8192^2
"""
import argparse, os, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if "--check" in sys.argv: os.environ["TRITON_INTERPRET"] = "1"  # read when triton.jit decorates the kernel
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

BLOCK = 128  # weights per block of 4-bit codes: 64 bytes of codes and one fp32 scale per state

# Triton's `/` (div.full, within 2 ulp, as Inductor writes it), IEEE, approximate
DIVISIONS = {"full": 0, "ieee": 1, "approx": 2}
TINY = tl.constexpr(1.1754943508222875e-38)  # fp32's smallest normal: the divisor of an all-zero block (as the codecs')

@triton.jit
def divide(a, b, DIVISION: tl.constexpr):
    "a / b: as Triton's `/` (0), rounded as IEEE divides (1, as eager PyTorch does), or approximately (2)"
    if DIVISION == 1: return tl.div_rn(a, b)
    elif DIVISION == 2: return tl.fdiv(a, b, approx=True)
    else: return a / b

@triton.jit
def ulp_bf16(x):
    "The spacing of bf16 at each fp32 value `x` (bf16 values): 2^(e-7) from the exponent bits, at least 2^-133"
    power = (x.to(tl.int32, bitcast=True) & 0x7F800000).to(tl.float32, bitcast=True)
    return tl.maximum(power * 0.0078125, 9.183549615799121e-41)

@triton.jit
def adamw_int4_step(theta_ptr, grad_ptr, residual_ptr, m_codes_ptr, m_scales_ptr, v_codes_ptr, v_scales_ptr,
                    lr, beta1, beta2, eps, decay, blocks, XB: tl.constexpr, DIVISION: tl.constexpr):
    "One AdamW step of `blocks` blocks of 128 bf16 weights with 4-bit states and the int8 residual, XB blocks a program"
    row = tl.program_id(0) * XB + tl.arange(0, XB)
    rows = (row < blocks)[:, None]
    element = row[:, None] * 128 + tl.arange(0, 128)[None, :]
    byte = row[:, None] * 64 + tl.arange(0, 64)[None, :]
    theta = tl.load(theta_ptr + element, mask=rows, other=0.0).to(tl.float32)
    g = tl.load(grad_ptr + element, mask=rows, other=0.0).to(tl.float32)
    rho = tl.load(residual_ptr + element, mask=rows, other=0).to(tl.float32)
    m_bytes = tl.load(m_codes_ptr + byte, mask=rows, other=0).to(tl.uint8, bitcast=True)
    v_bytes = tl.load(v_codes_ptr + byte, mask=rows, other=0)
    m_scale = tl.load(m_scales_ptr + row, mask=row < blocks, other=0.0)
    v_scale = tl.load(v_scales_ptr + row, mask=row < blocks, other=0.0)
    # decode: a byte's low four bits are its first weight's code, the high four its second's
    qm = tl.reshape(tl.join(m_bytes & 15, m_bytes >> 4), (XB, 128)).to(tl.float32) - 8.0
    qv = tl.reshape(tl.join(v_bytes & 15, v_bytes >> 4), (XB, 128)).to(tl.float32)
    m = (divide(qm, 14.0 - tl.abs(qm), DIVISION) * m_scale[:, None]).to(tl.bfloat16).to(tl.float32)
    root = divide(qv, 30.0 - qv, DIVISION) * v_scale[:, None]
    v = (root * root).to(tl.bfloat16).to(tl.float32)
    k = (rho * ulp_bf16(theta) * (1.0 / 254.0)).to(tl.bfloat16).to(tl.float32)
    # AdamW into the compensation, then the Kahan commit
    m = (m + (1.0 - beta1) * (g - m)).to(tl.bfloat16).to(tl.float32)
    v = (beta2 * v + (1.0 - beta2) * g * g).to(tl.bfloat16).to(tl.float32)
    k = k - decay * theta - lr * divide(m, tl.sqrt(v) + eps, DIVISION)
    total = theta + k.to(tl.bfloat16).to(tl.float32)
    new_theta = total.to(tl.bfloat16)
    k = total - new_theta.to(tl.float32)
    # encode: the residual, then each state's new block scale and codes
    scaled = libdevice.rint(divide(254.0 * k, ulp_bf16(new_theta.to(tl.float32)), DIVISION))
    new_rho = tl.minimum(tl.maximum(scaled, -127.0), 127.0)
    m_max = tl.max(tl.abs(m), axis=1)
    m_codes = libdevice.rint(divide(m, tl.abs(m) + tl.maximum(m_max, TINY)[:, None], DIVISION) * 14.0) + 8.0
    root = tl.sqrt(tl.maximum(v, 0.0))
    v_max = tl.max(root, axis=1)
    v_codes = libdevice.rint(divide(30.0 * root, root + tl.maximum(v_max, TINY)[:, None], DIVISION))
    v_codes = tl.where(root > 0, tl.maximum(v_codes, 1.0), 0.0)
    m_low, m_high = tl.split(tl.reshape(m_codes.to(tl.uint8), (XB, 64, 2)))
    v_low, v_high = tl.split(tl.reshape(v_codes.to(tl.uint8), (XB, 64, 2)))
    tl.store(theta_ptr + element, new_theta, mask=rows)
    tl.store(residual_ptr + element, new_rho.to(tl.int8), mask=rows)
    tl.store(m_codes_ptr + byte, (m_low | (m_high << 4)).to(tl.int8, bitcast=True), mask=rows)
    tl.store(v_codes_ptr + byte, v_low | (v_high << 4), mask=rows)
    tl.store(m_scales_ptr + row, m_max, mask=row < blocks)
    tl.store(v_scales_ptr + row, v_max, mask=row < blocks)

SIGNATURE = {"theta_ptr": "*bf16", "grad_ptr": "*bf16", "residual_ptr": "*i8", "m_codes_ptr": "*i8",
             "m_scales_ptr": "*fp32", "v_codes_ptr": "*u8", "v_scales_ptr": "*fp32", "lr": "fp32", "beta1": "fp32",
             "beta2": "fp32", "eps": "fp32",
             "decay": "fp32", "blocks": "i32", "XB": "constexpr", "DIVISION": "constexpr"}

def count() -> None:
    "Compile the kernel for sm_90 at each XB and num_warps and print its fewest SASS instructions per parameter"
    sys.argv = [sys.argv[0], "--compile-worker"]  # triton_check as its worker: no interpreter, a stand-in driver
    sys.path.insert(0, str(ROOT / "tools"))
    import kernel_instructions, triton_check
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.driver import driver
    from triton.tools.disasm import get_sass
    driver.set_active(triton_check.InterpreterDriver())
    issue_rate, floor_rate = 33.45e12, 4.1e12 / 10  # instructions a second (H100/H200); parameters a second at 10 bytes
    for division, mode in DIVISIONS.items():
        counts = []
        for xb in (1, 2, 4, 8):
            for warps in (1, 2, 4, 8):
                per_thread = xb * BLOCK / (32 * warps)
                if per_thread < 1: continue
                source = ASTSource(adamw_int4_step, SIGNATURE, constexprs={"XB": xb, "DIVISION": mode})
                compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
                counts.append((kernel_instructions.main_body_instructions(get_sass(compiled.asm["cubin"])) / per_thread,
                               f"XB {xb}, {warps} warps"))
        fewest, setting = min(counts)
        print(f"int4 AdamW step in one kernel, {division} division: {fewest:.1f} sm_90 instructions per parameter "
              f"({setting}): a bound of {issue_rate / fewest / floor_rate:.2f} of the floor", flush=True)

def check(steps: int = 5) -> None:
    """In Triton's interpreter: each of `steps` steps against optimi_nb's eager step taken from the same weights and
    states (its residual, codes and scales copied in first), so that the two differ by one step's roundings only"""
    sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "tools"))
    import triton_check  # its interpreter patches: bf16 conversions rounded to nearest even, libdevice on NumPy
    triton_check.patch_interpreter()
    import optimi_nb
    from optimi_nb.adam import debias_beta
    from optimi_nb.low_precision import ulp
    gen = torch.Generator().manual_seed(0)
    ours = torch.nn.Parameter((torch.randn(64, 128, generator=gen) * 0.1).bfloat16())
    opt = optimi_nb.AdamW([ours], lr=1e-3, state_precision="int4", kahan_precision="int8", compiled=False)
    exact = lambda w, r: w.double() + r.double() * ulp(w).double() / 254  # θ + k, from the weights and the residual
    same = lambda a, b: (a.view(torch.uint8) == b.view(torch.uint8)).float().mean().item()
    blocks = ours.numel() // BLOCK
    theta = ours.detach().clone().view(-1)  # and zero states, as a first step finds them
    residual, m_codes = torch.zeros(ours.numel(), dtype=torch.int8), torch.zeros(ours.numel() // 2, dtype=torch.int8)
    v_codes = torch.zeros(ours.numel() // 2, dtype=torch.uint8)
    m_scales, v_scales = torch.zeros(blocks), torch.zeros(blocks)
    for step in range(1, steps + 1):
        ours.grad = (torch.randn(64, 128, generator=gen) * 1e-2).bfloat16()
        if step > 1:  # the library's step from the kernel's weights and states
            with torch.no_grad(): ours.copy_(theta.view_as(ours))
            kernel_state = (("kahan_comp", residual.view_as(ours)), ("exp_avg", m_codes), ("exp_avg_scale", m_scales),
                            ("exp_avg_sq", v_codes), ("exp_avg_sq_scale", v_scales))
            for name, kept in kernel_state: opt.state[ours][name].copy_(kept)
        before = theta.clone(), residual.clone()
        grad = ours.grad.view(-1).clone()
        opt.step()
        betas = debias_beta(0.9, step), debias_beta(0.99, step)
        adamw_int4_step[(blocks // 4,)](theta, grad, residual, m_codes, m_scales, v_codes, v_scales, 1e-3, *betas, 1e-6,
                                        1e-3 * 1e-2, blocks, XB=4, DIVISION=1)  # IEEE division, as eager divides
        state = opt.state[ours]
        moved = (exact(ours.detach().view(-1), state["kahan_comp"].view(-1)) - exact(*before)).abs()
        apart = (exact(theta, residual) - exact(ours.detach().view(-1), state["kahan_comp"].view(-1))).abs()
        print(f"step {step}: θ + k apart by at most {apart.max().item():.1e} "
              f"({(apart / moved.max()).max().item():.1e} of the step's largest move), "
              f"median {apart.median().item():.1e}; codes the same: "
              f"m {same(m_codes, state['exp_avg']):.3f}, v {same(v_codes, state['exp_avg_sq']):.3f}")

def time_on_gpu(rounds: int, record: bool) -> None:
    "On a GPU: the kernel's step of 8 bf16 matrices of 8192² (8 launches), each division, beside an fp32 copy"
    import json, statistics
    gen = torch.Generator("cuda").manual_seed(0)
    numel, blocks = 8192 * 8192, 8192 * 8192 // BLOCK
    zeros = lambda n, dtype=torch.float32: torch.zeros(n, dtype=dtype, device="cuda")
    tensors = [dict(theta=torch.randn(numel, device="cuda", generator=gen).bfloat16(),
                    grad=(torch.randn(numel, device="cuda", generator=gen) * 1e-2).bfloat16(),
                    residual=zeros(numel, torch.int8), m=zeros(numel // 2, torch.int8), m_scales=zeros(blocks),
                    v=zeros(numel // 2, torch.uint8), v_scales=zeros(blocks))
               for _ in range(8)]
    src, dst = torch.randn(8 * numel, device="cuda"), torch.empty(8 * numel, device="cuda")
    def step(division: int, xb: int = 4, warps: int = 1):
        for t in tensors:
            adamw_int4_step[(triton.cdiv(blocks, xb),)](
                t["theta"], t["grad"], t["residual"], t["m"], t["m_scales"], t["v"], t["v_scales"],
                1e-3, 0.9, 0.99, 1e-6, 1e-5, blocks, XB=xb, DIVISION=division, num_warps=warps)
    def timed(fn) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize(); start.record(); fn(); end.record(); end.synchronize()
        return start.elapsed_time(end)
    rows = {}
    for division, mode in DIVISIONS.items():
        settings = [(xb, warps) for xb in (1, 2, 4, 8) for warps in (1, 2, 4, 8) if xb * BLOCK >= 32 * warps]
        for xb, warps in settings: step(mode, xb, warps)  # compiled once each
        best = min(settings, key=lambda s: statistics.median(timed(lambda: step(mode, *s)) for _ in range(3)))
        times = [(timed(lambda: step(mode, *best)), timed(lambda: dst.copy_(src))) for _ in range(rounds)]
        step_ms, copy_ms = (statistics.median(t[i] for t in times) for i in (0, 1))
        floor_ms = copy_ms * 10 / 8  # 10 bytes per parameter against the copy's 8
        rows[division] = dict(ms=round(step_ms, 3), copy_ms=round(copy_ms, 3), floor_ms=round(floor_ms, 3),
                              of_floor=round(floor_ms / step_ms, 2), setting=f"XB {best[0]}, {best[1]} warps")
        print(f"int4 AdamW step in one kernel, {division} division:", rows[division], flush=True)
    if record:
        path = ROOT / "nbs" / "measured.json"
        measured = json.loads(path.read_text())
        measured["int4_kernel_trial_cuda"] = dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                                                  command="python3 " + " ".join(sys.argv), rows=rows)
        path.write_text(json.dumps(measured, indent=1, ensure_ascii=False) + "\n")

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", action="store_true", help="count its sm_90 instructions per parameter")
    parser.add_argument("--check", action="store_true", help="run it in Triton's interpreter against optimi_nb's step")
    parser.add_argument("--time", action="store_true", help="on a GPU: time it on 8 x 8192^2 beside the copy floor")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--record", action="store_true", help="with --time: store the figures in nbs/measured.json")
    args = parser.parse_args()
    if args.check: check()
    if args.count: count()
    if args.time:
        if not torch.cuda.is_available(): sys.exit(f"int4_kernel_trial: torch {torch.__version__} sees no CUDA GPU")
        time_on_gpu(args.rounds, args.record)
