"""What the chat facts see of other modules: the functions and methods this file imports, as
the project pass linked them (`chatbound.analysis.project`). A call to one sends a parameter to a model
(`llm.chat(history)`) or returns a whole history kept elsewhere (`memory.get()`); with no
link (a single file, a dynamic import) the facts stay within the module.
"""

from __future__ import annotations

import libcst as cst

from chatbound import frameworks
from chatbound.syntax.messages import callee_name
from chatbound.vocabulary.facts import History, Storage, Use
from chatbound.vocabulary.sinks import AGENT_RUNS, MESSAGE_ARGUMENTS, Sink, dotted, keyword, positional, sink_of
from chatbound.vocabulary.summaries import Place, RemoteFunction, RemoteHistory


class ImportedFacts:
    """Imported senders and history holders; `self.linked` is set by `ChatFacts`."""

    def imported_function(self, call: cst.Call) -> RemoteFunction | None:
        """The linked function `call` runs: by its imported name, or a method of an instance
        of an imported class (`memory = Memory()` ... `memory.get()`, `Memory().get()`, or a parameter
        annotated with the class: `specialist: BillingSpecialist` ... `specialist.run(h)`)."""
        if self.linked is None or not self.linked.functions:
            return None
        key = ("remote", id(call))  # asked of a call again and again: each read of a history, each site
        if key not in self._summaries:
            self._summaries[key] = self._linked_function(call)
        return self._summaries[key]

    def _linked_function(self, call: cst.Call) -> RemoteFunction | None:
        names = set(self.qualified(call.func))
        if isinstance(call.func, cst.Name) and not names:
            names.add(call.func.value)  # a function a star import binds (`from store import *`)
        if isinstance(call.func, cst.Attribute):
            receiver, method = call.func.value, call.func.attr.value
            names |= {f"{c}.{method}" for c in self.client_of(receiver, typed=True)}
            if isinstance(receiver, cst.Call):  # an instance made where it is used: `Transport(client).send(h)`
                names |= {f"{c}.{method}" for c in self.qualified(receiver.func)}
        return next((self.linked.functions[n] for n in sorted(names) if n in self.linked.functions), None)

    def imported_sites(self) -> list[tuple[cst.Call, Sink]]:
        """Calls that hand an argument to a function of another module that sends it whole
        (once per module: the send sites and a framework's bounds both ask)."""
        cached = self._summaries.get("imported sites")
        if cached is not None:
            return cached
        found = self._summaries["imported sites"] = []
        for call in self.nodes.calls:
            remote = self.imported_function(call) if not self.callees(call) else None
            if remote is None:
                continue
            for send in remote.sends:
                argument = self.passed_on(call, remote.params, send.param, send.position)
                if argument is not None and not self._runs_elsewhere(call, remote, send):
                    found.append((call, Sink(call, send.api, send.framework, (argument,))))
                    self.sent_elsewhere[id(call)] = send.place
            for param, method in remote.relays:
                relayed = self._relayed(call, remote.params, param, method)
                if relayed is not None:
                    found.append((call, relayed))
        return found

    def _runs_elsewhere(self, call: cst.Call, remote: RemoteFunction, send) -> bool:
        """The helper's model call is made on what the caller gives it, and that runs its own
        model calls (`transport.send(graph, state)` of a compiled graph): no send here."""
        receiver = self.argument_in(call, remote.params, send.receiver) if send.receiver else None
        return receiver is not None and frameworks.runs_elsewhere(self, receiver, send.api.rpartition(".")[2])

    def given_receivers(self, call: cst.Call) -> list[cst.BaseExpression]:
        """What `call` gives another module's function to make its model call on (`send(engine, q)`
        of `def send(recv, q): return recv.chat(q)`, or a wrapper relaying to a method of it)."""
        remote = self.imported_function(call) if not self.callees(call) else None
        if remote is None:
            return []
        params = {s.receiver for s in remote.sends if s.receiver} | {p for p, _ in remote.relays}
        return [a for p in sorted(params) if (a := self.argument_in(call, remote.params, p)) is not None]

    def _relayed(self, call: cst.Call, params: tuple[str, ...], param: str, method: str) -> Sink | None:
        """The model call a wrapper's `recv.method(*args, **kwargs)` is for this call: the method
        on what the call gives for `recv`, with the arguments it gives the star parameters."""
        receiver = self.argument_in(call, params, param)
        if receiver is None:
            return None
        named = [p for p in params if not p.startswith("*")]
        skip = 1 if named and named[0] in ("self", "cls") and isinstance(call.func, cst.Attribute) else 0
        positional = [a for a in call.args if a.keyword is None and not a.star]
        rest = [
            *positional[len(named) - skip :],
            *(a for a in call.args if a.star or (a.keyword is not None and a.keyword.value not in named)),
        ]
        sent = sink_of(
            cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(method)), args=rest),
            self.qualified,
            self.assignment_before,
        )
        return Sink(call, sent.api, sent.framework, sent.content) if sent is not None else None

    def passed_on(
        self, call: cst.Call, params: tuple[str, ...], param: str, position: int = 0
    ) -> cst.BaseExpression | None:
        """The argument of `call` that binds `param`; a wrapper's `**kwargs` is bound by the
        messages keyword the call passes (`messages=`), its `*args` by the positional argument
        `position` places after its named parameters."""
        if param.startswith("**"):
            given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            return next((given[k] for k in MESSAGE_ARGUMENTS if k in given and k not in params), None)
        if param.startswith("*"):
            named = [p for p in params if not p.startswith("*")]
            return self.argument_in(call, (*named, *(f"*{i}" for i in range(position)), param), param)
        return self.argument_in(call, params, param)

    def agent_run(self, call: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """(the agent, the input) of an Agents SDK run: `Runner.run(agent, items)` (openai-agents
        0.24 `starting_agent`, `input`), or a call of another module's function that runs the
        agent and the input it is given (`transport.run(items, agent)`)."""
        parts = dotted(call.func)
        if callee_name(call) in AGENT_RUNS and parts[-2:-1] == ["Runner"]:
            agent = positional(call, 0) or keyword(call, "starting_agent")
            items = positional(call, 1) or keyword(call, "input")
            return (agent.value, items.value) if agent is not None and items is not None else None
        remote = self.imported_function(call) if not self.callees(call) else None
        for send in remote.sends if remote is not None else ():
            if send.framework == "agents" and send.agent:
                agent_value = self.passed_on(call, remote.params, send.agent)
                items_value = self.passed_on(call, remote.params, send.param, send.position)
                if agent_value is not None and items_value is not None:
                    return agent_value, items_value
        return None

    def imported_uses(self, call: cst.Call) -> list[Use] | None:
        """The whole history an imported function returns; [] when it is linked and returns
        none (a bounded view), None when the call is not linked."""
        remote = self.imported_function(call)
        if remote is None:
            return None
        if remote.returns is None:
            return []
        return [Use(self.imported_history(remote.returns).storage, call)]

    def imported_history(self, remote: RemoteHistory) -> History:
        summary = remote.summary
        key = f"{remote.path}:{summary.key}"
        history = self.imported_histories.get(key)
        if history is None:
            history = self.imported_histories[key] = History(
                Storage(key, summary.kind, summary.label),
                definitions=[Place(remote.path, span) for span in summary.definitions],
                growth=[Place(remote.path, span, label) for span, label in summary.growth],
                trims=[Place(remote.path, span) for span in summary.trims],
                roles=set(summary.roles),
                tool_traffic=summary.tool_traffic,
                system_first=summary.system_first,
                bounded_store=summary.bounded_store,
                textual=summary.textual,
            )
        return history
