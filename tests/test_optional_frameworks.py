"""A framework or server the suite needs and cannot have: a failure in CI (`CI=true`), a skip
saying why elsewhere; the runtime tests of frameworks that need a virtualenv of their own are
left out of a CI run of the whole suite that lacks them, and required where named."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import conftest
import pytest


def outcome_of(call, *args, **kwargs) -> BaseException:
    """The exception `call` raises, caught whatever it is: a skip raised here must not skip this test."""
    try:
        call(*args, **kwargs)
    except BaseException as error:  # noqa: B036 - pytest's outcomes are BaseExceptions
        return error
    raise AssertionError(f"{call.__name__} returned")


@pytest.mark.parametrize("ci, outcome", [(True, pytest.fail.Exception), (False, pytest.skip.Exception)])
def test_a_missing_module_fails_in_ci_and_is_skipped_with_its_reason_elsewhere(monkeypatch, ci, outcome):
    monkeypatch.setattr(conftest, "IN_CI", ci)
    raised = outcome_of(conftest.require, "no_such_framework_xyz", reason="the reason given")
    assert type(raised) is outcome
    assert re.search(r"no_such_framework_xyz cannot be imported .*; the reason given", str(raised))


def test_a_module_that_imports_is_returned():
    assert conftest.require("json").dumps([]) == "[]"


@pytest.mark.parametrize("ci, outcome", [(True, pytest.fail.Exception), (False, pytest.skip.Exception)])
def test_a_server_that_does_not_start_fails_in_ci(monkeypatch, ci, outcome):
    monkeypatch.setattr(conftest, "IN_CI", ci)
    raised = outcome_of(conftest.unavailable, "PostgreSQL (pgserver) could not start here: OSError: no")
    assert type(raised) is outcome and "could not start" in str(raised)


def _ignored(monkeypatch, *, ci, installed, args):
    monkeypatch.setattr(conftest, "IN_CI", ci)
    monkeypatch.setattr(conftest.importlib.util, "find_spec", lambda name: object() if installed else None)
    path = Path(conftest.__file__).parent / "test_chainlit_runtime.py"
    return conftest.pytest_ignore_collect(path, SimpleNamespace(args=[str(a) for a in args]))


def test_a_framework_of_its_own_virtualenv_is_left_out_of_a_ci_run_of_the_suite_without_it(monkeypatch):
    tests = Path(conftest.__file__).parent
    assert _ignored(monkeypatch, ci=True, installed=False, args=[]) is True
    assert _ignored(monkeypatch, ci=True, installed=False, args=[tests]) is True
    # named on the command line (its own virtualenv, .ci/run): collected, so a missing framework fails
    assert _ignored(monkeypatch, ci=True, installed=False, args=[tests / "test_chainlit_runtime.py"]) is None
    assert _ignored(monkeypatch, ci=True, installed=True, args=[]) is None
    assert _ignored(monkeypatch, ci=False, installed=False, args=[]) is None  # locally: a skip, with its reason


def test_every_other_test_module_is_collected_in_ci(monkeypatch):
    monkeypatch.setattr(conftest, "IN_CI", True)
    config = SimpleNamespace(args=[])
    tests = Path(conftest.__file__).parent
    others = [p for p in tests.rglob("test_*.py") if p.name not in conftest.OWN_VIRTUALENV]
    assert others and all(conftest.pytest_ignore_collect(p, config) is None for p in others)


def test_ci_is_read_from_the_environment_as_ci_services_set_it():
    assert conftest.IN_CI == (conftest.os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"))
