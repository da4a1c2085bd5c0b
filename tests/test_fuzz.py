"""Fuzzing the analyzer: generated programs and damaged fixtures give findings or a one-line
per-file error, never an exception (and never an internal error on code Python accepts)."""

from __future__ import annotations

import ast
import warnings

import hypothesmith
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatbound.run.pipeline import analyze_source
from chatbound.run.registry import all_rules

SOURCES = sorted(FIXTURES.rglob("*.py"))
FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _python_accepts(source: bytes | str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _analyzes_cleanly(source: bytes | str) -> None:
    result = analyze_source(source, "fuzz.py", all_rules(), {})
    if result.error is not None:
        assert "\n" not in result.error.message and result.error.path == "fuzz.py"
        if _python_accepts(source):
            assert not result.error.message.startswith("internal error"), result.error.message
    for finding in result.findings:
        assert finding.path == "fuzz.py" and finding.span.line >= 1 and finding.span.col >= 1


@FUZZ
@given(hypothesmith.from_grammar())
def test_generated_programs_analyze_cleanly(source):
    _analyzes_cleanly(source)


@st.composite
def damaged_fixtures(draw):
    data = bytearray(draw(st.sampled_from(SOURCES)).read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "delete"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del data[at:]
        elif kind == "insert":
            data[at:at] = draw(st.sampled_from([b"(", b"\0", b"\xff", b"\r", b"'''", b"\t", b"lambda: ", b"\\"]))
        elif data:
            del data[at : at + draw(st.integers(1, 40))]
    return bytes(data)


@FUZZ
@given(damaged_fixtures())
def test_damaged_fixtures_analyze_cleanly(source):
    _analyzes_cleanly(source)
