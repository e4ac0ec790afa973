"""The functions of optimi_nb that ask which device a tensor is on, each with why `tools/triton_check.py` may run it on
a CPU in place of a GPU. The triton check stops on any other; `tools/house_check.py` fails on one, so a new device check
is explained here when it is written, not found the next time a GPU check runs. Standard library only."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Every function of optimi_nb that asks which device a tensor is on, and why this check may run it on the CPU
DEVICE_CHECKS_KNOWN = {
    ("kahan.py", "round_to"): "inside the compiled step: patch_for_cuda_kernels gives it a CUDA device's answer",
    ("low_precision.py", "power_of_two"): "inside the compiled step (ulp, of the int8 residual): patch_for_cuda_kernels gives it a CUDA device's answer",
    ("codecs.py", "by_byte_pairs"): "inside the compiled step (4-bit encoders): patch_for_cuda_kernels gives it a CUDA device's answer",
    ("foreach.py", "foreach_by_default"): "not reached: compiled=True always updates buckets of tensors",
    ("low_precision.py", "gpu_capability"): "outside the compiled step: it picks the eager step for bf16 on a GPU below 8.0 (the sm_75 column's *)",
    ("layout.py", "slice_numel"): "outside the compiled step: it cuts a bucket into chunks (2^22 elements where compiled "
                                  "or on a GPU); the model's tensors (5,194 elements) make one chunk either way",
    ("compiled_call.py", "_run_compiled"): "picks the compile options by device type: compile_as_for_cuda gives every step the CUDA ones",
    ("compiled_call.py", "_compiled_call"): "not reached: the check turns direct calls off (`direct_calls = False`), so every "
                                            "update goes through torch.compile, whose kernels it checks",
    ("plan.py", "compiled_by_default"): "outside the compiled step: the default of compiled=None; the check passes compiled=True",
    ("step_graph.py", "_recordable"): "outside the compiled step: steps are recorded as CUDA graphs on a CUDA device only; "
                                      "the check's steps run unrecorded, as a GPU's first steps do",
    ("memory.py", "cuda_peak_bytes_per_param"): "not reached: a measurement of the notebooks' GPU cells, outside any step",
}
DEVICE_CHECK = re.compile(r"\.device\.type|\bdevice\.type\b|\.is_cuda\b|\.is_cpu\b|get_device_capability|get_device_properties")

def device_checks() -> list[tuple[str, str, int, str]]:
    "Every line of optimi_nb that asks for a tensor's device: (file, function, line number, line)"
    found = []
    for path in sorted((ROOT / "optimi_nb").glob("*.py")):
        function = None
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.match(r"\s*def ", line): function = line.split("def ", 1)[1].split("(")[0]
            if DEVICE_CHECK.search(line.split("#")[0]): found.append((path.name, function, number, line.strip()))
    return found

def unknown_device_checks() -> list[str]:
    "The lines of optimi_nb that ask for a tensor's device in a function this list does not explain"
    return [f"optimi_nb/{name}:{number} ({function}): {line}" for name, function, number, line in device_checks()
            if (name, function) not in DEVICE_CHECKS_KNOWN]

def stale_device_checks() -> list[str]:
    "The entries of DEVICE_CHECKS_KNOWN whose function no longer asks for a device (moved, renamed or gone)"
    asking = {(name, function) for name, function, _, _ in device_checks()}
    return [f"{name} {function}" for name, function in DEVICE_CHECKS_KNOWN if (name, function) not in asking]
