"""One pytest test per notebook: each runs the notebook's cells with nbdev's own test runner.

Cells flagged with a `tst_flags` flag from settings.ini (`#| cuda`, `#| slow`) are skipped unless enabled,
e.g. `pytest tests --flags "cuda slow"` on a GPU machine."""
import nbdev.test
import pytest
from pathlib import Path
from nbdev.config import get_config
from nbdev.doclinks import nbglob

CONFIG = get_config()
NOTEBOOKS = sorted(nbglob(CONFIG.nbs_path, func=Path), key=lambda p: p.name)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook(notebook, request):
    enabled = request.config.getoption("--flags").split()
    skipped = [flag for flag in CONFIG.tst_flags.split() if flag not in enabled]
    passed, _ = nbdev.test.test_nb(notebook, skip_flags=skipped, basepath=CONFIG.config_path)
    assert passed, f"{notebook.name} failed; its traceback is printed above"
