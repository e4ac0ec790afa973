import os, sys


def pytest_addoption(parser):
    parser.addoption("--flags", default="", help="space-separated tst_flags to enable, e.g. 'cuda slow'")


def pytest_configure(config):
    "Under pytest-xdist, share the cores among the workers, so that their torch threads do not outnumber the cores"
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        import torch
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        torch.set_num_threads(max(1, cores // workers))


LONGEST = ("22_distributed", "36_4bit_states", "23_frameworks", "35_8bit_states")  # CI's slowest, from --durations


def pytest_collection_modifyitems(config, items):
    "The longest notebooks first, so that under pytest-xdist none of them starts last and holds up the run"
    items.sort(key=lambda item: next((i for i, name in enumerate(LONGEST) if f"[{name}]" in item.nodeid), len(LONGEST)))


def pytest_unconfigure(config):
    """Forget torch.compile's cleanup hooks for code compiled from notebook namespaces: at interpreter exit those
    namespaces are already gone, and each hook would print an ignored KeyError after pytest's summary line"""
    dynamo_utils = sys.modules.get("torch._dynamo.utils")
    if dynamo_utils is not None: dynamo_utils.CleanupManager.instance.clear()
