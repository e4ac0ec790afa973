"""Write `nbs/fixtures/checkpoints_0.1.0.pt`: checkpoints saved by optimi_nb 0.1.0, and where training continued from them.

It was run once, on release 0.1.0 (commit 9bb9e56), before the house was rebuilt; the checkpointing chapter loads the file
with the code of today and checks that training continues bit for bit. Running it again writes a fixture of the code it
runs on, which tests nothing about 0.1.0: keep the committed file.

    python3 tools/make_checkpoint_fixture.py --gradients

writes `nbs/fixtures/gradients_0.1.0.pt` instead: the gradients of each continued step, which the chapter feeds to the
optimizer in place of a forward and backward pass, so that the check does not depend on how a CPU's matrix kernels round.
It replays each continuation with the code of today and refuses to write unless it reaches 0.1.0's weights bit for bit
(the run with 8-bit states, whose codes today round a few values the other way, is exempt: its gradients are today's)."""
import copy, sys
import torch
from torch import nn
import optimi_nb

CONFIGS = {  # name: (optimizer, dtype of the weights, keyword arguments)
    "AdamW fp32": ("AdamW", torch.float32, dict(lr=1e-2, weight_decay=1e-2)),
    "AdamW bf16 Kahan": ("AdamW", torch.bfloat16, dict(lr=1e-2, weight_decay=1e-2)),
    "AdamW bf16 int8 states and residual": ("AdamW", torch.bfloat16, dict(lr=1e-2, weight_decay=1e-2, state_precision="int8", kahan_precision="int8")),
    "SGD bf16 momentum stochastic rounding": ("SGD", torch.bfloat16, dict(lr=1e-1, momentum=0.9, stochastic_rounding=True)),
    "Lion bf16 int8 states foreach": ("Lion", torch.bfloat16, dict(lr=1e-3, weight_decay=1e-2, state_precision="int8", foreach=True)),
    "Adan fp32": ("Adan", torch.float32, dict(lr=1e-2, weight_decay=2e-2)),
    "Ranger bf16 Kahan": ("Ranger", torch.bfloat16, dict(lr=1e-2, k=2)),
    "AdamWScheduleFree fp32": ("AdamWScheduleFree", torch.float32, dict(lr=1e-2, warmup_steps=2)),
    "Muon bf16": ("Muon", torch.bfloat16, dict(lr=2e-2)),
}

def model_of(dtype):
    "The model every checkpoint trains: one Linear(64, 64), 4160 parameters (its weight's states are quantized)"
    torch.manual_seed(0)
    return nn.Linear(64, 64).to(dtype)

def train_steps(model, opt, steps) -> list[list[torch.Tensor]]:
    "`steps` steps on batches seeded by the step number, so a resumed run sees the same data; each step's gradients, returned"
    gradients = []
    for step in steps:
        g = torch.Generator().manual_seed(step)
        x = torch.randn(16, 64, generator=g).to(model.weight.dtype)
        loss = (model(x).float() - x.float().roll(1, 1)).square().mean()
        loss.backward(); gradients.append([p.grad.clone() for p in model.parameters()]); opt.step(); opt.zero_grad()
    return gradients

def record_gradients(path: str = "nbs/fixtures/gradients_0.1.0.pt") -> None:
    "Replay each continuation of the committed fixture and write the gradients of its steps, if it reaches 0.1.0's weights"
    runs = torch.load("nbs/fixtures/checkpoints_0.1.0.pt", weights_only=False); runs.pop("version")
    gradients = {}
    for name, saved in runs.items():
        model = model_of(saved["dtype"]); model.load_state_dict(saved["model"])
        params = optimi_nb.muon_param_groups(model) if saved["optimizer"] == "Muon" else model.parameters()
        opt = getattr(optimi_nb, saved["optimizer"])(params, **saved["kwargs"]); opt.load_state_dict(saved["state_dict"])
        gradients[name] = train_steps(model, opt, range(3, 6))
        same = all(torch.equal(model.state_dict()[k], v) for k, v in saved["continued"].items())
        if not same and "int8 states" not in name: raise SystemExit(f"{name}: this machine does not reach 0.1.0's weights; no file written")
    torch.save(gradients, path)
    print(f"wrote the gradients of {len(gradients)} continued runs to {path}")

if __name__ == "__main__" and "--gradients" in sys.argv: record_gradients()
elif __name__ == "__main__":
    fixture = {"version": optimi_nb.__version__}
    for name, (cls, dtype, kwargs) in CONFIGS.items():
        model = model_of(dtype)
        params = optimi_nb.muon_param_groups(model) if cls == "Muon" else model.parameters()
        opt = getattr(optimi_nb, cls)(params, **kwargs)
        train_steps(model, opt, range(3))
        saved = {"optimizer": cls, "dtype": dtype, "kwargs": kwargs,
                 "model": {k: v.clone() for k, v in model.state_dict().items()}, "state_dict": copy.deepcopy(opt.state_dict())}  # a state dict holds the live state tensors
        train_steps(model, opt, range(3, 6))
        fixture[name] = saved | {"continued": {k: v.clone() for k, v in model.state_dict().items()}}
    torch.save(fixture, "nbs/fixtures/checkpoints_0.1.0.pt")
    print(f"wrote {len(CONFIGS)} checkpoints of optimi_nb {optimi_nb.__version__}")
