def pytest_addoption(parser):
    parser.addoption("--flags", default="", help="space-separated tst_flags to enable, e.g. 'cuda slow'")
