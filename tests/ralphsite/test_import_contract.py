"""The import contract (pyproject.toml's [tool.importlinter], run by `make lint`) holds, and it fails the
build on a wrong-way import: checked on a copy of the tree, once as it is and once with one base
module importing an app."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

PACKAGES = ("ralphsite", "sessions_app", "ledger_app", "conversations_app")
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    base = Path(settings.BASE_DIR)
    for package in PACKAGES:
        shutil.copytree(base / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "static"))
    shutil.copy(base / "pyproject.toml", root / "pyproject.toml")
    return root


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tree, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})


def test_it_keeps_the_contract_as_the_tree_is(tree: Path) -> None:
    result = _lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_it_breaks_when_the_base_imports_an_app(tree: Path) -> None:
    errors = tree / "ralphsite" / "core" / "errors.py"
    original = errors.read_text()
    errors.write_text(original + "\nfrom sessions_app.models import Session  # noqa\n")
    try:
        result = _lint(tree)
    finally:
        errors.write_text(original)
    assert result.returncode == 1
    assert "ralphsite.core.errors -> sessions_app.models" in result.stdout
