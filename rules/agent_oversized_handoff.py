"""AGENT-OVERSIZED-HANDOFF: the whole conversation handed to another agent instead of a brief."""

from __future__ import annotations

import ast
import re

import libcst as cst

from chatbound import frameworks
from chatbound.analysis.chat import CHAT_CALLS, ChatRule
from chatbound.analysis.histories import History, Use, walk
from chatbound.analysis.rule import Invalid
from chatbound.findings import Severity
from chatbound.syntax.messages import ast_callee_name, callee_name
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.vocabulary.sinks import dotted, keyword, positional, sink_of
from chatbound.vocabulary.summaries import Place

HANDOFF_VERBS = ("handoff", "hand_off", "escalate", "delegate", "dispatch", "forward", "transfer", "route_to")
HANDOFF_NAME = re.compile(rf"^a?({'|'.join(HANDOFF_VERBS)})(_\w+)?$", re.I)
# Who receives a handoff: a second agent or model, named for its role.
SPECIALIST_WORDS = (
    "specialist",
    "subagent",
    "sub_agent",
    "expert",
    "escalation",
    "supervisor",
    "worker",
    "reviewer",
    "critic",
    "researcher",
    "child",
    "senior",
    "tier2",
    "tier_2",
    "human_agent",
    "second",
)
SPECIALIST = re.compile("|".join(SPECIALIST_WORDS), re.I)
RUN_METHODS = frozenset(
    "run arun run_sync run_async run_stream invoke ainvoke chat achat ask aask answer respond handle "
    "generate agenerate generate_reply a_generate_reply kickoff kickoff_async stream astream complete".split()
)
# A value built from the history *for* the handoff: not the history any more.
BRIEF = re.compile(r"brief|summar|digest|recap|condense|distil|extract|outline|handoff_note|synopsis", re.I)
AGENT_RUNS = ("run", "run_sync", "run_streamed")
FAN_OUTS = ("gather", "create_task")


def may_hand_off(name: str, receiver: str, fan_out: bool) -> bool:
    """Whether a call of `name` on `receiver` (the name before it: `Runner` in `Runner.run`)
    may hand a conversation over, in a module that fans out work or not."""
    return (
        name in frameworks.HANDOFF_CALLS
        or bool(HANDOFF_NAME.match(name))
        or (name in AGENT_RUNS and receiver == "Runner")
        or (name in RUN_METHODS and bool(SPECIALIST.search(receiver)))
        or (fan_out and (name in RUN_METHODS or name in CHAT_CALLS))
    )


def _ast_receiver(func: ast.expr) -> str:
    """`b` of `a.b.c(...)`, as `dotted(...)[-2]` reads it where a name can match ("" elsewhere)."""
    value = func.value if isinstance(func, ast.Attribute) else None
    return value.attr if isinstance(value, ast.Attribute) else value.id if isinstance(value, ast.Name) else ""


class AgentOversizedHandoff(ChatRule):
    r"""
    ## What it does
    Flags a whole conversation handed to a second agent or model, where the analysis shows
    both halves; a name alone never decides.

    The value is a conversation: a history the analysis saw grow with the turns (the history
    itself, a copy, `h[1:]`, a comprehension or `"\n".join` over it, a helper of the module
    returning it), or a framework's conversation state (an Agents SDK run's `to_input_list()`,
    LangGraph `state["messages"]`); the history may be kept by another module of the project
    (`desk.transcript()` of a class whose list grows there). The receiver sends it to a model:
    a model call, a function or method whose parameter reaches one (of this module, or of
    another module linked through the imports: an instance known by its constructor or by the
    class its parameter is annotated with, the model call there named as a related location),
    or a framework agent. Where it looks:

    - a call named like `handoff`, `escalate`, `delegate`, `dispatch`, `forward`, `transfer`
      or `route_to`, in any argument position;
    - a specialist or sub-agent object's `run`, `invoke` or `chat`;
    - framework handoffs the analysis knows (`chatbound.frameworks`): LangGraph
      `Send(node, {"messages": state["messages"]})`, `Command(goto=..., update={"messages":
      state["messages"] + [...]})`, langgraph-supervisor `create_supervisor` and the
      supervisor/swarm `create_handoff_tool`; a node of a checkpointed graph that a conditional
      edge routes to by the name of a routing tool call (`if call["name"] == ToBilling.__name__:
      return "billing"`, directly or through an entry node's edge) and that sends the whole shared
      `state["messages"]` to its own model (reported at its send, or where the graph registers a
      node an imported factory makes; a router returning a `Send` with a brief is not); OpenAI Agents SDK `handoff(...)` and bare agents in
      `Agent(handoffs=[...])` or `agent.handoffs = [...]` without `input_filter`, where runs
      continue a conversation, in the module or in one that imports its agents (a `session=`,
      `previous_response_id=`, `conversation_id=` or a replayed `to_input_list()`; a one-shot
      run hands over one message) (unless `RunConfig(handoff_input_filter=...)` or a
      `handoff_history_mapper=` is set: `nest_handoff_history` alone still writes every item
      into the one message it hands over); a Swarm agent function that returns another `Agent`;
      AutoGen AgentChat team participants with the default model context, in a team kept
      between requests and run again; a LlamaIndex `Workflow` step taking the event an
      orchestrator step emits after reading the chosen agent from its transfer tool call, and
      sending its own model the whole chat history the `Context` holds (passed in with the
      start event);
    - every model call of an `asyncio.gather` / `create_task` fan-out;
    - OpenAI Agents `Runner.run(other_agent, result.to_input_list())` after a run of another
      agent.

    Not flagged: a brief or summary built for the handoff, the last message or the last N, a
    trimming `input_filter`, task fields, the same agent continuing (`result.last_agent`), and
    what only names suggest: a request's `context` dict passed to a bot's own `dispatch`, a
    parameter called `history`, a `transcript()` or `specialist.run` of a class the project
    does not show (an installed package's, an unannotated parameter's), a receiver of another
    module whose parameter reaches no model there (an archivist writing a file).

    Reported at the handing-over call, with the place the transcript is built as a related
    location. The finding carries a cost projection of what the receiving agent pays.

    ## Why is this bad?
    The receiving agent pays for every earlier turn again (greetings, tool dumps, retrieved
    documents) on each of its own calls, and has to find the task in a transcript written for
    someone else. Compacting the parent's memory does not help when the child gets the parent's
    whole context.

    ## Example
    ```python
    from openai import OpenAI

    client = OpenAI()
    history = []

    def escalate(transcript):
        return client.chat.completions.create(model="gpt-4o", messages=transcript)

    def on_message(text):
        history.append({"role": "user", "content": text})
        return escalate(history)
    ```
    chatbound reports it at the call that hands the conversation over:
    ```text
    app.py:11:12: AGENT-OVERSIZED-HANDOFF The whole conversation (`history`) is handed to `escalate`: the receiving agent pays for every earlier turn again on each of its calls.
    ```

    ## Use instead
    ```python
    import json

    def on_message(text, facts_so_far):
        history.append({"role": "user", "content": text})
        brief = {"goal": text, "facts": facts_so_far}
        return escalate([{"role": "user", "content": json.dumps(brief)}])
    ```
    Hand over a brief: the goal, the facts gathered so far, and the last turn or two if the
    specialist needs the wording.

    ## Fix
    None automatic where the only right fix is a brief: what belongs in it depends on the task.
    The message says what was handed over and suggests building one.

    An AutoGen AgentChat team participant gets its framework's bound, unsafe:
    `model_context=BufferedChatCompletionContext(buffer_size=20)` on its `AssistantAgent(...)`
    (the team still hands it the whole thread; it sends the last 20 messages, never a function
    result without its call). Unsafe because in a long team run the task that opened the run
    can leave the window while the run goes on.

    ## Frameworks covered
    Hand-written agents (any handoff-like call or specialist object), LangGraph (`Send`,
    `Command`, supervisor and swarm handoff tools),
    `asyncio` fan-outs, and the OpenAI Agents SDK (`Runner.run`, `handoff`,
    `RunConfig(handoff_input_filter=..., handoff_history_mapper=...)`).

    Frameworks that keep the conversation themselves are modelled one module each: [Frameworks](https://github.com/chatbound/chatbound/blob/main/docs/frameworks.md)
    lists what each is checked for under this rule, what counts as bounded, and the versions
    checked.
    """

    ID = "AGENT-OVERSIZED-HANDOFF"
    NAME = "agent-oversized-handoff"
    SEVERITY = Severity.HIGH
    SUMMARY = "A second agent receives the whole conversation instead of a brief."
    TAGS = ("cost", "llm", "agents")
    READS_LINKS = True  # a receiver, or the history it is handed, may be of another module
    CROSS_MODULE = True  # an agent run or a worker's model call may be another module's function
    # The calls `_may_hand_off` accepts: every finding is reported on one of them.
    TRIGGERS = (
        re.compile(rb"\ba?(?:%s)(?:_[\w\x80-\xff]*)?[\s)]*\(" % b"|".join(v.encode() for v in HANDOFF_VERBS), re.I),
        re.compile(rb"\b(?:%s)[\s)]*\(" % b"|".join(f.encode() for f in FAN_OUTS)),
        *frameworks.HANDOFF_TRIGGERS,
        re.compile(rb"\bRunner[\s)]*\."),
        # a specialist's run/invoke/chat: the receiver is named for its role
        re.compile(
            rb"(?:%s)[\w\x80-\xff]*[\s)]*\.\s*(?:%s)[\s)]*\("
            % (
                b"|".join(w.encode() for w in SPECIALIST_WORDS),
                b"|".join(m.encode() for m in sorted(RUN_METHODS)),
            ),
            re.I,
        ),
    )

    VALID = [
        # a brief built for the handoff
        "def handoff(text):\n"
        "    return llm.invoke(text)\n"
        "class Desk:\n"
        "    def __init__(self):\n"
        "        self.history = []\n"
        "    def reply(self, q):\n"
        "        self.history.append({'role': 'user', 'content': q})\n"
        "        brief = summarize_for_handoff(self.history)\n"
        "        return handoff(brief)\n",
        # the last few turns
        "class Desk:\n"
        "    def __init__(self):\n"
        "        self.history = []\n"
        "    def reply(self, q):\n"
        "        self.history.append({'role': 'user', 'content': q})\n"
        "        return self.sub_agent.invoke(self.history[-4:])\n",
        # a handoff of task fields
        "def route(ticket, specialist):\n    return specialist.handoff(ticket.subject, ticket.customer_id)\n",
        # Slack Bolt: the request's context dict goes to the bot's own dispatch, no model in sight
        "class Bot:\n"
        "    def on_message(self, event, context):\n"
        "        context['history'] = context.get('history', [])\n"
        "        return self.dispatch(event=event, context=context)\n",
        # a growing history handed to a receiver the module does not show sending it to a model
        "from .specialists import BillingSpecialist\n"
        "class Desk:\n"
        "    def __init__(self):\n"
        "        self.history = []\n"
        "        self.specialist = BillingSpecialist()\n"
        "    def reply(self, q):\n"
        "        self.history.append({'role': 'user', 'content': q})\n"
        "        return self.specialist.handoff(self.history)\n",
        # OpenAI Agents: a handoff that trims what the next agent sees
        "from agents import handoff\nfrom agents.extensions import handoff_filters\n"
        "to_billing = handoff(billing_agent, input_filter=handoff_filters.remove_all_tools)\n",
        # the same agent continues the conversation (the SDK's multi-turn pattern)
        "from agents import Runner\n"
        "async def turn(agent, result, text):\n"
        "    items = result.to_input_list() + [{'role': 'user', 'content': text}]\n"
        "    return await Runner.run(result.last_agent, items)\n",
        # the agent of the earlier run continues, its replay carried by a local
        "from agents import Runner\n"
        "async def turn(agent, question, text):\n"
        "    result = await Runner.run(agent, question)\n"
        "    items = result.to_input_list() + [{'role': 'user', 'content': text}]\n"
        "    return await Runner.run(agent, items)\n",
        # LangGraph: a Command that adds one message (the reducer keeps the rest)
        "from langgraph.types import Command\n"
        "def triage(state):\n"
        "    return Command(goto='billing', update={'messages': [reply]})\n",
        # LangGraph: the router sends the specialist the routing tool call's request, not the thread
        "from langgraph.graph import StateGraph, MessagesState\n"
        "from langgraph.checkpoint.memory import MemorySaver\n"
        "from langgraph.types import Send\n"
        "def route(state):\n"
        "    call = state['messages'][-1].tool_calls[0]\n"
        "    if call['name'] == ToBilling.__name__:\n"
        "        return Send('billing', {'messages': [('user', call['args']['request'])]})\n"
        "def billing(state: MessagesState):\n"
        "    return {'messages': [llm.invoke(state['messages'])]}\n"
        "builder = StateGraph(MessagesState)\n"
        "builder.add_node('billing', billing)\n"
        "builder.add_conditional_edges('desk', route, ['billing'])\n"
        "graph = builder.compile(checkpointer=MemorySaver())\n",
        # LangGraph: the worker gets its own task, not the transcript
        "from langgraph.types import Send\n"
        "def fan_out(state):\n"
        "    return [Send('research', {'topic': t}) for t in state['topics']]\n",
    ]
    INVALID = [
        # LangGraph: a specialist routed to by a routing tool call reads the whole checkpointed thread
        Invalid(
            "from langgraph.graph import StateGraph, MessagesState\n"
            "from langgraph.checkpoint.memory import MemorySaver\n"
            "def route(state):\n"
            "    call = state['messages'][-1].tool_calls[0]\n"
            "    if call['name'] == ToBilling.__name__:\n"
            "        return 'billing'\n"
            "def billing(state: MessagesState):\n"
            "    return {'messages': [llm.invoke(state['messages'])]}\n"
            "builder = StateGraph(MessagesState)\n"
            "builder.add_node('billing', billing)\n"
            "builder.add_conditional_edges('desk', route)\n"
            "graph = builder.compile(checkpointer=MemorySaver())\n",
            8,
            26,
            8,
            55,
        ),
        # OpenAI Agents SDK: a bare agent in handoffs=[...] is a handoff with no input_filter
        Invalid(
            "from agents import Agent, Runner\n"
            "triage = Agent(name='triage', handoffs=[billing_agent])\n"
            "result = Runner.run_sync(triage, question, session=session)\n",
            2,
            41,
            2,
            54,
        ),
        # LangGraph: a Command that forwards the whole message list to the next agent
        Invalid(
            "from langgraph.types import Command\n"
            "def triage(state):\n"
            "    return Command(goto='billing', update={'messages': state['messages'] + [note]})\n",
            3,
            12,
            3,
            84,
        ),
        # a specialist class of the module whose handoff sends what it is given
        Invalid(
            "from openai import OpenAI\n"
            "client = OpenAI()\n"
            "class Specialist:\n"
            "    def handoff(self, messages):\n"
            "        return client.chat.completions.create(model='gpt-4o', messages=messages)\n"
            "class Desk:\n"
            "    def __init__(self):\n"
            "        self.history = []\n"
            "        self.specialist = Specialist()\n"
            "    def reply(self, q):\n"
            "        self.history.append({'role': 'user', 'content': q})\n"
            "        return self.specialist.handoff(self.history)\n",
            12,
            16,
            12,
            53,
        ),
        # several arguments, a copy without the system prompt
        Invalid(
            "import litellm\n"
            "def escalate_to_human(ticket_id, transcript, priority):\n"
            "    return litellm.completion(model='gpt-4o', messages=transcript, metadata={'ticket': ticket_id})\n"
            "class Desk:\n"
            "    def __init__(self):\n"
            "        self.messages = []\n"
            "    def reply(self, q, ticket):\n"
            "        self.messages.append({'role': 'user', 'content': q})\n"
            "        escalate_to_human(ticket.id, self.messages[1:], priority='high')\n",
            9,
            9,
            9,
            73,
        ),
        # a transcript() of the module's assistant, joined into text for a delegate that prompts with it
        Invalid(
            "class Assistant:\n"
            "    def __init__(self, llm):\n"
            "        self.llm = llm\n"
            "        self.history = []\n"
            "    def ask(self, q):\n"
            "        self.history.append(('user', q))\n"
            "        return self.llm.invoke(self.history[-6:])\n"
            "    def transcript(self):\n"
            "        return self.history\n"
            "def delegate(llm, task, context):\n"
            "    return llm.invoke(f'Task: {task}\\n{context}')\n"
            "def handle(assistant, specialist_llm):\n"
            "    text = '\\n'.join(f'{role}: {content}' for role, content in assistant.transcript())\n"
            "    return delegate(specialist_llm, task='refund', context=text)\n",
            14,
            12,
            14,
            65,
        ),
        Invalid(
            "from langgraph.types import Send\n"
            "def fan_out(state):\n"
            "    return [Send('expert', {'messages': state['messages']}) for _ in range(3)]\n",
            3,
            13,
            3,
            60,
        ),
        Invalid(
            "from agents import Runner\n"
            "async def escalate(triage_agent, billing_agent, question):\n"
            "    result = await Runner.run(triage_agent, question)\n"
            "    return await Runner.run(billing_agent, result.to_input_list())\n",
            4,
            18,
            4,
            67,
        ),
        # the same replay carried by a dict entry before the run
        Invalid(
            "from agents import Runner\n"
            "async def escalate(triage_agent, billing_agent, question):\n"
            "    result = await Runner.run(triage_agent, question)\n"
            "    job = {'items': result.to_input_list()}\n"
            "    return await Runner.run(billing_agent, job['items'])\n",
            5,
            18,
            5,
            57,
        ),
        Invalid(
            "from agents import Runner, handoff\nto_billing = handoff(agent=billing_agent)\n"
            "result = Runner.run_sync(desk, question, session=session)\n",
            2,
            14,
            2,
            42,
        ),
        Invalid(
            "import asyncio\n"
            "sessions = {}\n"
            "def remember(sid, role, text):\n"
            "    sessions.setdefault(sid, []).append({'role': role, 'content': text})\n"
            "async def review(workers, sid):\n"
            "    history = sessions[sid]\n"
            "    return await asyncio.gather(*(w.ainvoke(history) for w in workers))\n",
            7,
            35,
            7,
            53,
        ),
    ]

    def leave_Module(self, original_node: cst.Module) -> None:
        fan_out = any(callee_name(c) in FAN_OUTS for c in self.nodes.calls)
        sending = self._imported_senders()
        candidates = [c for c in self.nodes.calls if self._may_hand_off(c, fan_out) or callee_name(c) in sending]
        if not candidates:
            return  # the chat facts (and their metadata) are built only for a possible handoff
        # a call that is only a candidate because the module fans out must be one of the workers
        # (only parent links, far cheaper than the scopes and qualified names the facts need)
        candidates = [
            c for c in candidates if self._may_hand_off(c, False) or self._fanned_out(c) or callee_name(c) in sending
        ]
        if not candidates:
            return
        facts = self.chat_facts()
        self.facts = facts
        reported: set[int] = set()
        for handoff in frameworks.handoffs(facts):
            reported.add(id(handoff.node))
            self.report(
                handoff.node,
                handoff.message,
                suggestion=handoff.advice,
                properties=handoff.properties,
                related=[self.related(node, message) for node, message in handoff.related],
            )
        for call in candidates:
            if id(call) in reported:
                continue
            for target in self._handoff_targets(call):
                argument = target.value if isinstance(target, cst.Arg) else target
                found = self._whole_history(argument)
                if found is not None and self._receiver_sends(call, argument) and not self._own_party(call, found[2]):
                    reported.add(id(call))
                    self._report(call, argument, found)
                    break

    # --- where a conversation changes hands --------------------------------------------

    def _imported_senders(self) -> set[str]:
        """The names of the functions of other modules that send a parameter (as the project
        pass linked them): a call of one may be an agent run or a worker's model call."""
        linked = self.context.project
        return {name.rsplit(".", 1)[-1] for name, f in linked.functions.items() if f.sends} if linked else set()

    @staticmethod
    def _may_hand_off(call: cst.Call, fan_out: bool) -> bool:
        """A syntactic first cut of `_handoff_targets`, before any dataflow."""
        parts = dotted(call.func)
        return may_hand_off(callee_name(call), parts[-2] if len(parts) > 1 else "", fan_out)

    @staticmethod
    def may_report_tree(tree: PythonTree, options: dict) -> bool:
        """The first cut above on CPython's tree: most files with a `forward(` or `worker` hold
        no call that could hand a conversation over (a `def forward(...)`, a `worker.start()`)."""
        calls = tree.nodes(ast.Call)
        names = [(ast_callee_name(call), call.func) for call in calls]
        fan_out = any(name in FAN_OUTS for name, _ in names)
        return any(may_hand_off(name, _ast_receiver(func), fan_out) for name, func in names)

    def _handoff_targets(self, call: cst.Call) -> list[cst.CSTNode]:
        """The arguments of `call` that a second agent receives, or [] when it is no handoff."""
        name = callee_name(call)
        parts = dotted(call.func)
        if self.facts.agent_run(call) is not None:
            return [call] if self._other_agent(call) else []
        if HANDOFF_NAME.match(name):
            return list(call.args)
        receiver = parts[-2] if len(parts) > 1 else ""
        if name in RUN_METHODS and SPECIALIST.search(receiver):
            return list(call.args)
        if (
            name in RUN_METHODS or sink_of(call, self.facts.qualified) or self._sent_elsewhere(call)
        ) and self._fanned_out(call):
            return list(call.args)
        return []

    def _sent_elsewhere(self, call: cst.Call) -> bool:
        """A call of another module's function that sends what it is given (`transport.ask(worker, h)`)."""
        return any(site is call for site, _ in self.facts.imported_sites())

    def _receiver_sends(self, call: cst.Call, argument: cst.CSTNode) -> bool:
        """Whether the analysis shows the receiver sending `argument` to a model: the call is a
        model call, or a function of this module whose parameter reaches one, or a framework
        agent (an Agents SDK run of another agent). A receiver the analysis cannot see (a method
        of another module's class) is not guessed from its name."""
        if argument is call:
            return True  # a framework agent: `_handoff_targets` checked the framework
        return any(site is call and any(a is argument for a in sink.content) for site, sink in self.facts.sites())

    def _own_party(self, call: cst.Call, history: History | None) -> bool:
        """Whether the receiver is the conversation's own party, not a second agent: no other
        model call sends the history, and it grows with what this call returns
        (`h.extend(result.new_messages())` after `async with expert.run_stream(q,
        message_history=h) as result`). That is the chat itself, which MEMORY reports."""
        if history is None:
            return False
        key = history.storage.key
        for site, sink in self.facts.sites():
            if site is not call and any(
                use.storage.key == key for a in sink.content for use in self.facts.whole_history_in(a)
            ):
                return False
        return any(
            self._derives_from(value, call, 0)
            for site in history.growth
            if isinstance(site, cst.CSTNode)
            for value in self.facts.growth_values(site)
        )

    def _derives_from(self, expr: cst.CSTNode, call: cst.Call, depth: int) -> bool:
        """Whether `expr` is computed from `call`'s result, through the locals it was bound from."""
        if depth > 4:
            return False
        for node in walk(expr):
            if node is call:
                return True
            if isinstance(node, cst.Name) and any(
                isinstance(value, cst.BaseExpression) and self._derives_from(value, call, depth + 1)
                for value in self._bound_from(node)
            ):
                return True
        return False

    def _bound_from(self, name: cst.Name) -> list[cst.CSTNode]:
        """What a local was bound from: its assignment, or the loop it is the variable of
        (`for m in result.new_messages(): h.append(m)`)."""
        loops = [
            loop.iter
            for loop in self.facts.loops_of(name)
            if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and loop.target.value == name.value
        ]
        return [self.facts.assignment_before(name), *loops]

    def _fanned_out(self, call: cst.Call) -> bool:
        """Each worker's call in `asyncio.gather(*(w.run(h) for w in ws))` or `create_task` in a loop."""
        for parent in self._ancestors(call):
            if isinstance(parent, cst.Call):
                name = callee_name(parent)
                if name == "gather":
                    return True
                if name == "create_task":
                    return any(
                        isinstance(a, (cst.For, cst.ListComp, cst.GeneratorExp)) for a in self._ancestors(parent)
                    )
                if parent.func is not call:
                    return False
            if isinstance(parent, (cst.SimpleStatementLine, cst.FunctionDef)):
                return False
        return False

    def _other_agent(self, call: cst.Call) -> bool:
        """`Runner.run(B, result.to_input_list())` where `result` came from a run of another agent
        (either run may be another module's function running the agent it is given)."""
        run = self.facts.agent_run(call)
        if run is None:
            return False
        agent, items = run
        agent_code = self.facts.code(agent)
        if agent_code.endswith("last_agent"):
            return False
        for node in self._replays(items):
            receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
            earlier = self._earlier_run(receiver) if isinstance(receiver, cst.Name) else None
            if earlier is not None and self.facts.code(earlier[0]) != agent_code:
                return True
        return False

    def _replays(self, items: cst.BaseExpression) -> list[cst.Call]:
        """The `result.to_input_list()` calls whose list `items` is: written there, or carried
        by a local, a dict entry, a tuple or a field (the analysis' dataflow, read by its code)."""
        written = [n for n in walk(items) if isinstance(n, cst.Call) and callee_name(n) == "to_input_list"]
        if written:
            return written
        carried = {u.storage.label for u in self.facts.whole_history_in(items) if u.storage.kind == "accessor"}
        function = self.facts.function_of(items)
        return [
            c
            for c in self.nodes.calls
            if callee_name(c) == "to_input_list"
            and self.facts.code(c) in carried
            and self.facts.function_of(c) is function
        ]

    def _earlier_run(self, name: cst.Name) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """(the agent, the input) of the run whose result `name` holds."""
        value = self.facts.assignment_before(name)
        if isinstance(value, cst.Await):
            value = value.expression
        return self.facts.agent_run(value) if isinstance(value, cst.Call) else None

    def _whole_history(self, expr: cst.BaseExpression) -> tuple[str, cst.CSTNode, History | None] | None:
        """(how the code names the conversation, where it enters, its history when the analysis
        keeps one) when `expr` carries a whole one:
        a history the analysis saw grow with the turns, or a framework's conversation state (an
        Agents SDK run's input list, LangGraph's `state["messages"]`)."""
        run = self.facts.agent_run(expr) if isinstance(expr, cst.Call) else None
        framework_run = run is not None
        if run is not None:
            expr = run[1]
        if self._built_as_brief(expr, 0):
            return None
        for use in self.facts.whole_history_in(expr):
            if self._grows_with_turns(use) or (framework_run and use.storage.kind == "accessor"):
                return use.storage.label, use.node, self._history(use)
        state = frameworks.state_messages(self.facts, expr)
        return (self.facts.code(state), state, None) if state is not None else None

    def _grows_with_turns(self, use: Use) -> bool:
        """A history the analysis saw grow every turn (not a value named like one: a request's
        `context` dict or a parameter called `history` shows no growth)."""
        history = self._history(use)
        return history is not None and bool(history.growth) and history.is_chat

    def _history(self, use: Use) -> History | None:
        """The history `use` reads: kept by this module, or by another one (a linked method)."""
        return self.facts.histories.get(use.storage.key) or self.facts.imported_histories.get(use.storage.key)

    def _built_as_brief(self, expr: cst.CSTNode, depth: int) -> bool:
        """A value computed for the handoff: a brief/summary call, or a model call over the history."""
        if depth > 4:
            return False
        if isinstance(expr, cst.Name):
            if BRIEF.search(expr.value):
                return True
            value = self.facts.assignment_before(expr)
            if isinstance(value, cst.Await):
                value = value.expression
            return isinstance(value, cst.BaseExpression) and self._built_as_brief(value, depth + 1)
        if isinstance(expr, cst.Call):
            return bool(BRIEF.search(callee_name(expr))) or sink_of(expr, self.facts.qualified) is not None
        return False

    # --- findings -------------------------------------------------------------------------

    def _report(self, call: cst.Call, argument: cst.CSTNode, found: tuple[str, cst.CSTNode, History | None]) -> None:
        label, node, history = found
        callee = self.facts.code(call.func)
        if isinstance(argument, cst.Call) and callee_name(argument) in AGENT_RUNS:
            callee = f"{callee}({self.facts.code(positional(argument, 0).value)}, ...)"
            argument = (positional(argument, 1) or keyword(argument, "input")).value
        shown = self.facts.code(argument)
        through = "" if shown == label or len(shown) > 60 else f", as `{shown}`"
        related = []
        if self.span(node).line != self.span(call).line:
            related.append(self.related(node, f"`{self.facts.code(node)}` carries the whole conversation"))
        for place in history.growth[:1] if history is not None else ():
            if isinstance(place, Place):  # kept by another module
                related.append(self.related(place, f"`{label}` grows here"))
        elsewhere = self.facts.sent_elsewhere.get(id(call))
        if elsewhere is not None:
            related.append(self.related(elsewhere, f"`{callee}` sends it whole to {elsewhere.label} here"))
        self.report(
            call,
            f"The whole conversation (`{label}`{through}) is handed to `{callee}`: the receiving "
            "agent pays for every earlier turn again on each of its calls.",
            suggestion="Hand over a brief: the goal, the facts that matter and the last turn "
            "(a few hundred tokens), and keep the transcript in storage.",
            related=related,
        )
