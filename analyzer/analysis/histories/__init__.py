"""Chat facts about one module: where histories live, how they grow, what reaches a model.

`ChatFacts(rule, nodes)` is built once per module from the nodes a `ChatRule` collected in
the single traversal (see `chatbound.analysis.chat`). It is assembled from parts a reader can take
one at a time, each answering one kind of question:

- `tree`: where a node stands (parents, function, class, loops), the value a name was last
  bound to, which of the module's functions a call may run.
- `storage`: `storage_of(expr)`, the lasting state an expression names; `stores`: a history
  kept in a database (read whole and written back by one request), or a local read from a
  store and saved back whole.
- `growth`: `histories[key]`, the `History` of each storage (definitions, growth sites,
  trims, count windows, tool traffic, a system message first, whether it is chat at all).
- `bounds`: trims, size tests, rings and bounded views (`h[-N:]`).
- `caps`: a hard stop, growth refused once the history is past a size (`if len(h) > N: return`).
- `uses`: `whole_history_in(expr)`, every whole history inside an expression.
- `carried`: what a read out of a local dict, tuple or dataclass built in reach gives
  (`box["items"]`, `pair[0]`, `box.items`: the expression put there).
- `flows`: `sinks` (every model call), `sites()` and `flows()`, the (history, send site)
  pairs where a whole history reaches a model, through helpers that send a parameter too.
- `imported`: the functions of other modules this file calls, as the project pass linked
  them (`chatbound.analysis.project`): senders of a parameter, holders of a whole history.

The words they answer in (`Storage`, `Use`, `History`, `Flow`) are in `vocabulary`.
"""

from __future__ import annotations

import libcst as cst

from chatbound.analysis.histories.bounds import BoundFacts, deleted, is_ring
from chatbound.analysis.histories.caps import CapFacts
from chatbound.analysis.histories.carried import CarriedFacts
from chatbound.analysis.histories.flows import FlowFacts
from chatbound.analysis.histories.growth import GROWTH_METHODS, GrowthFacts
from chatbound.analysis.histories.imported import ImportedFacts
from chatbound.analysis.histories.storage import INPUT_CALLS, StorageFacts
from chatbound.analysis.histories.stores import StoreFacts
from chatbound.analysis.histories.uses import UseFacts, is_history_accessor
from chatbound.syntax.tree import ModuleTree, walk
from chatbound.vocabulary.facts import Flow, History, Storage, Use
from chatbound.vocabulary.sinks import Sink
from chatbound.vocabulary.summaries import Place

__all__ = [
    "GROWTH_METHODS",
    "INPUT_CALLS",
    "ChatFacts",
    "Flow",
    "History",
    "Storage",
    "Use",
    "deleted",
    "is_history_accessor",
    "is_ring",
    "walk",
]


class ChatFacts(
    FlowFacts,
    UseFacts,
    GrowthFacts,
    BoundFacts,
    CapFacts,
    StorageFacts,
    StoreFacts,
    ImportedFacts,
    CarriedFacts,
    ModuleTree,
):
    """The chat facts of one module (see the module docstring for what each part answers)."""

    def __init__(self, rule: cst.BatchableCSTVisitor, nodes) -> None:
        self.rule = rule
        self.nodes = nodes
        self.linked = getattr(rule.context, "project", None)  # what the project pass linked, if anything
        self.sent_elsewhere: dict[int, Place] = {}  # call -> the model call in another module it reaches
        self.sent_inside: dict[int, cst.Call] = {}  # a helper's call -> the model call of this module it reaches
        self.imported_histories: dict[str, History] = {}
        self._ranks: dict[cst.CSTNode, int] | None = None  # see order()
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        for function in nodes.functions:
            self.functions.setdefault(function.name.value, []).append(function)
        self.list_fields = self._list_fields()
        self.gradio_params = self._gradio_params()
        self._storage_cache: dict[int, Storage | None] = {}
        self._early: dict[cst.For, bool] = {}  # see _stops_early
        self.framework_data: dict[str, object] = {}  # what a framework module works out once per module
        self.histories: dict[str, History] = {}
        self.sinks: list[Sink] = [s for s in map(self._sink, nodes.calls) if s]
        self._summaries: dict[int, tuple] = {}
        self.store_writes: list = []  # (call, databases.Write) of the module (see stores)
        self.store_growth: set[int] = set()  # ids of store writes that grow a history
        self._reached: dict[int, list] | None = None
        self._collect()
