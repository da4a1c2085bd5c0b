"""Finds every rule in `chatbound.rules` and selects them by id or prefix."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the rules import LibCST: a run served from the cache loads none of them
    from chatbound.analysis.rule import Rule


@functools.cache
def all_rules() -> tuple[type[Rule], ...]:
    """Every Rule subclass defined in a module of `chatbound.rules`, sorted by id."""
    import chatbound.rules as package
    from chatbound.analysis.rule import Rule

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__:
                found.append(obj)
    return tuple(sorted(found, key=lambda rule: rule.ID))


def matches(rule_id: str, code: str) -> bool:
    """`MEMORY` selects `MEMORY-UNBOUNDED-HISTORY`; a full id selects itself."""
    code = code.strip().upper()
    return rule_id == code or rule_id.startswith(code + "-") or code == "ALL"


@functools.cache
def rule_ids() -> tuple[str, ...]:
    """Every rule's id, read from its module's name (`rag_excessive_top_k` holds
    RAG-EXCESSIVE-TOP-K, a test holds every module to it) without importing the rules, which
    load LibCST: settings are checked on every run, also one served from the cache."""
    import chatbound.rules as package

    return tuple(sorted(info.name.upper().replace("_", "-") for info in pkgutil.iter_modules(package.__path__)))


def unknown_codes(codes: Iterable[str]) -> list[str]:
    return [code for code in codes if not any(matches(rule_id, code) for rule_id in rule_ids())]


def select_rules(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> tuple[type[Rule], ...]:
    select, ignore = list(select), list(ignore)
    return tuple(
        rule
        for rule in all_rules()
        if (not select or any(matches(rule.ID, code) for code in select))
        and not any(matches(rule.ID, code) for code in ignore)
    )


def rule_by_id(rule_id: str) -> type[Rule] | None:
    return next((rule for rule in all_rules() if rule.ID == rule_id.strip().upper()), None)
