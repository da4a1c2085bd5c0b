"""Stores whose entries expire: a history kept as an entry of one ends with its time to live.

- ``cachetools.TTLCache(maxsize, ttl)``: an entry expires ``ttl`` seconds after it was last
  set; reading it (``cache[k]``, ``setdefault`` of a present key) does not renew it, appending
  to the list it holds neither (cachetools 8.0.2 ``TTLCache.__setitem__`` stamps
  ``expires = timer() + ttl``, ``__getitem__`` only compares).
- ``expiringdict.ExpiringDict(max_len, max_age_seconds)``: the same, stamped with
  ``time.time()`` by ``__setitem__`` (expiringdict 1.2.2).

So a session created once (``setdefault(k, [])``, ``if k not in s: s[k] = []``) and grown in
place cannot outlive the time to live; one written back every turn (``s[k] = history``)
renews it at each write, and the time to live only ends idle sessions.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from chatbound.syntax.messages import callee_name
from chatbound.syntax.values import literal

# Qualified name: (class shown, positional index and keyword of the time to live in seconds).
EXPIRING = {
    "cachetools.TTLCache": ("cachetools.TTLCache", 1, "ttl"),
    "expiringdict.ExpiringDict": ("expiringdict.ExpiringDict", 1, "max_age_seconds"),
}


@dataclass(frozen=True)
class Expiry:
    """An expiring store: its class, its time to live, and the lines that write a history back
    into it (each renews the entry), empty when entries are only created."""

    kind: str
    seconds: int
    renewed_on: tuple[int, ...] = ()

    @property
    def lifetime(self) -> int | None:
        """The longest a session can last, in seconds; None when write-backs renew it."""
        return None if self.renewed_on else self.seconds


def expiry_of(facts, store: str) -> Expiry | None:
    """The expiry of the store spelled ``store`` (`sessions`, `self.chats`), when the module
    sets it to a TTLCache or an ExpiringDict with a literal time to live, and only then."""
    made = [
        node.value
        for node in facts.nodes.assigns
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and _spelled(facts, node.targets[0].target) == store
    ]
    if len(made) != 1 or not isinstance(made[0], cst.Call):
        return None
    known = next((EXPIRING[name] for name in facts.qualified(made[0].func) if name in EXPIRING), None)
    if known is None:
        return None
    kind, index, keyword = known
    positional = [a.value for a in made[0].args if a.keyword is None and not a.star]
    named = {a.keyword.value: a.value for a in made[0].args if a.keyword is not None}
    seconds = _seconds(named[keyword] if keyword in named else positional[index] if len(positional) > index else None)
    if seconds is None or seconds <= 0:
        return None
    renewed = sorted({facts.rule.span(node).line for node in facts.nodes.assigns if _writes_back(facts, node, store)})
    return Expiry(kind, int(seconds), tuple(renewed))


def expiry_sentence(expiry: Expiry, store: str) -> str:
    """What a finding on a history kept in ``store`` says of its expiry."""
    kind = ("an " if expiry.kind[0] in "aeiou" else "a ") + expiry.kind
    ttl = f"{expiry.seconds:,} s" + (f" ({expiry.seconds // 60} min)" if expiry.seconds % 60 == 0 else "")
    if expiry.lifetime:
        return (
            f"`{store}` is {kind} whose entries expire {ttl} after they are set, so a session cannot "
            "outlive that time to live: the cost is projected within it."
        )
    lines = ", ".join(map(str, expiry.renewed_on))
    return (
        f"`{store}` is {kind} whose {ttl} time to live restarts at each write-back "
        f"(line{'s' if len(expiry.renewed_on) > 1 else ''} {lines}): it ends idle sessions, not long ones."
    )


def _seconds(node: cst.BaseExpression | None) -> float | None:
    """A literal number of seconds, or a product of them (`30 * 60`)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        left, right = _seconds(node.left), _seconds(node.right)
        return left * right if left is not None and right is not None else None
    value = literal(node) if node is not None else None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _spelled(facts, node: cst.CSTNode) -> str:
    return " ".join(facts.code(node).split())


def _writes_back(facts, node: cst.CSTNode, store: str) -> bool:
    """`store[k] = value` where value is not a new empty list (which only creates the entry)."""
    if not isinstance(node, cst.Assign):
        return False
    for target in node.targets:
        if isinstance(target.target, cst.Subscript) and _spelled(facts, target.target.value) == store:
            value = node.value
            fresh = (isinstance(value, cst.List) and not value.elements) or (
                isinstance(value, cst.Call) and callee_name(value) == "list" and not value.args
            )
            return not fresh
    return False
