"""The records a framework module answers with, beside the chat facts' own words."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from chatbound.vocabulary.summaries import Links


@dataclass(frozen=True)
class Kept:
    """A framework object that keeps a conversation and re-sends all of it on every turn."""

    node: cst.CSTNode  # where to report
    message: str
    advice: str
    properties: dict[str, Any] = field(default_factory=dict)  # framework, history, storage, sink
    related: tuple[tuple[Any, str], ...] = ()  # (a node of the module or a `Place` in another, what it shows)
    site: cst.CSTNode | None = None  # the model or memory call: none where a history it sends is reported already


@dataclass(frozen=True)
class Handoff:
    """A call that gives another agent the whole conversation."""

    node: cst.CSTNode
    message: str
    advice: str
    properties: dict[str, Any] = field(default_factory=dict)  # what the framework's fix needs
    related: tuple[tuple[Any, str], ...] = ()  # (a node of the module or a `Place` in another, what it shows)


@dataclass(frozen=True)
class Window:
    """A plain count cut a framework's conversation is written back with, over items holding tool
    calls and their outputs (MEMORY-WINDOW-SPLITS-TURN)."""

    node: cst.CSTNode  # the cut
    history: str  # what holds the conversation
    why: str  # why a count can split a turn there
    advice: str


def links(facts) -> Links:
    """What the project pass says about the module's names (`chatbound.analysis.project.users`)."""
    linked = facts.linked
    return linked.links if linked is not None else Links()
