from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SARIF_SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"  # the official OASIS schema


@pytest.fixture
def write(tmp_path):
    """Write files into tmp_path: write({"a.py": "x = 1"}) -> tmp_path."""

    def _write(files: dict[str, str | bytes]) -> Path:
        for name, content in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return tmp_path

    return _write


def invoke(*args, cwd):
    """Run `chatbound ARGS` in-process from the folder `cwd` (the CLI reads paths from there)."""
    import os

    from click.testing import CliRunner

    from chatbound.interfaces.cli import main

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    finally:
        os.chdir(old)
