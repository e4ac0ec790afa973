import sys


def pytest_addoption(parser):
    parser.addoption("--flags", default="", help="space-separated tst_flags to enable, e.g. 'cuda slow'")


def pytest_unconfigure(config):
    """Forget torch.compile's cleanup hooks for code compiled from notebook namespaces: at interpreter exit those
    namespaces are already gone, and each hook would print an ignored KeyError after pytest's summary line"""
    dynamo_utils = sys.modules.get("torch._dynamo.utils")
    if dynamo_utils is not None: dynamo_utils.CleanupManager.instance.clear()
