"""The words the chat facts answer in: a `Storage` (state that outlives a request), a `Use`
(a whole history inside an expression), a `History` (what one storage's code does to it) and
a `Flow` (a whole history reaching a model call).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from chatbound.syntax.messages import CHAT_NAME
from chatbound.vocabulary.sinks import Sink
from chatbound.vocabulary.summaries import Place


@dataclass(frozen=True)
class Storage:
    key: str  # identity shared by every expression naming the same state
    kind: str  # attribute | module | entry | session | gradio | loop | param
    label: str  # how the code spells it at the first place it was seen


@dataclass(frozen=True)
class Use:
    """A whole history inside an expression: `node` is where it enters, `via` how it got there."""

    storage: Storage
    node: cst.CSTNode
    via: tuple[cst.CSTNode, ...] = ()
    text: bool = False  # joined into prompt text: `node` stays the history inside the join


@dataclass
class History:
    storage: Storage
    definitions: list[cst.CSTNode] = field(default_factory=list)
    growth: list[cst.CSTNode] = field(default_factory=list)  # per-turn growth sites
    init_growth: list[cst.CSTNode] = field(default_factory=list)
    trims: list[cst.CSTNode] = field(default_factory=list)
    windows: list[cst.CSTNode] = field(default_factory=list)  # count-bounded views/stores
    roles: set[str] = field(default_factory=set)
    tool_traffic: bool = False
    system_first: bool = False
    bounded_store: bool = False
    textual: bool = False  # grows with text or records, not numbers
    growth_note: str = ""  # how a framework grows it, where no growth site says (`the add_messages reducer`)
    keepers: list = field(
        default_factory=list
    )  # where a framework is given what keeps it between turns (a checkpointer)

    @property
    def is_chat(self) -> bool:
        return bool(self.roles) or self.textual or bool(CHAT_NAME.search(self.storage.key))

    @property
    def unbounded(self) -> bool:
        return bool(self.growth) and self.is_chat and not self.trims and not self.bounded_store


@dataclass(frozen=True)
class Flow:
    history: History
    sink: Sink
    use: Use
    site: cst.Call  # the call where it enters: the sink, or a helper (of any module) that sends it
    elsewhere: tuple[Place, ...] = ()  # the model call, when it is in another module
