"""The real Swarm (PyPI `openai-swarm` 0.1.1, whose swarm/ package is openai/swarm's byte for
byte), a recording chat-completions client: a REPL that extends its list with each response
sends the whole conversation every turn, and chatbound's fix (`bounded_view(messages,
last_turns=10)` at the send) keeps it flat while the list keeps every message; an agent function
returning another agent gives the specialist the whole conversation, as chatbound reports.

.ci/run installs `openai-swarm` without its dependencies (tests/requirements/swarm.txt): its
package imports only openai and pydantic, while its declared `instructor` pins an older openai
than the test extra's."""

from __future__ import annotations

from types import SimpleNamespace

from conftest import require

require("swarm.core", reason="tests/requirements/swarm.txt: installed without its dependencies")
import swarm.core  # noqa: E402
from openai.types.chat import ChatCompletion, ChatCompletionMessage  # noqa: E402
from openai.types.chat.chat_completion import Choice  # noqa: E402
from openai.types.chat.chat_completion_message_function_tool_call import (  # noqa: E402
    ChatCompletionMessageFunctionToolCall,
    Function,
)

from chatbound.fixes.apply import apply_edits  # noqa: E402
from chatbound.run.pipeline import analyze_source  # noqa: E402
from chatbound.run.registry import all_rules  # noqa: E402

APP = '''\
from swarm import Agent, Swarm

client = Swarm()
messages = []


def transfer_to_lost_baggage():
    """Hand the customer to the lost-baggage desk."""
    return lost_baggage


triage = Agent(name="Triage", instructions="Find out what the customer needs.", functions=[transfer_to_lost_baggage])
lost_baggage = Agent(name="Lost baggage", instructions="Trace lost bags.")
agent = triage


def ask(text):
    global agent
    messages.append({"role": "user", "content": text})
    response = client.run(agent=agent, messages=messages)
    messages.extend(response.messages)
    agent = response.agent
    return response.messages[-1]["content"]
'''
TURNS = 30
LOST = 6  # the turn whose question triage hands to the lost-baggage desk


class Recording:
    """Stands in for `openai.OpenAI`: keeps (the agent's instructions, the number of messages) of
    each call; triage calls its transfer function when the customer says a bag is lost."""

    sent: list[tuple[str, int]] = []

    def __init__(self) -> None:
        self.chat = SimpleNamespace(completions=self)

    def create(self, model, messages, tools, tool_choice, stream, **options):
        self.sent.append((messages[0]["content"], len(messages)))
        message = ChatCompletionMessage(role="assistant", content=f"Answer {len(self.sent)}.")
        if tools and messages[-1]["role"] == "user" and "lost" in messages[-1]["content"]:
            call = ChatCompletionMessageFunctionToolCall(
                id=f"call-{len(self.sent)}",
                type="function",
                function=Function(name="transfer_to_lost_baggage", arguments="{}"),
            )
            message = ChatCompletionMessage(role="assistant", content=None, tool_calls=[call])
        choice = Choice(index=0, finish_reason="stop", message=message)
        return ChatCompletion(id="c", object="chat.completion", created=0, model=model, choices=[choice])


def run(source: str, monkeypatch) -> tuple[list[tuple[str, int]], int]:
    """What each call sent over TURNS turns, and how many messages the app's list keeps."""
    monkeypatch.setattr(swarm.core, "OpenAI", Recording)
    monkeypatch.setattr(Recording, "sent", [])
    namespace: dict = {}
    exec(compile(source, "app.py", "exec"), namespace)
    for turn in range(TURNS):
        namespace["ask"]("my bag is lost" if turn == LOST else f"question {turn}")
    return Recording.sent, len(namespace["messages"])


def findings(source: str) -> list:
    rules = [r for r in all_rules() if r.ID in ("MEMORY-UNBOUNDED-HISTORY", "AGENT-OVERSIZED-HANDOFF")]
    return analyze_source(source, "app.py", rules).findings


def test_the_repl_sends_its_whole_list_and_the_fix_keeps_it_flat(monkeypatch):
    [handoff, memory] = findings(APP)
    assert (memory.rule_id, memory.span.line, memory.span.col) == ("MEMORY-UNBOUNDED-HISTORY", 20, 49)
    before, kept_before = run(APP, monkeypatch)
    # the system prompt and every earlier message; turn LOST adds a tool call, its result and the desk's answer
    assert [n for _, n in before[: LOST + 1]] == [2 * turn + 2 for turn in range(LOST + 1)]
    assert before[-1][1] == 2 * TURNS + 2  # the last turn: the system prompt and all 61 messages
    fixed = apply_edits(APP, memory.fix.edits)
    assert "client.run(agent=agent, messages=bounded_view(messages, last_turns=10))" in fixed
    after, kept_after = run(fixed, monkeypatch)
    assert after[: LOST + 2] == before[: LOST + 2]  # under 10 turns the view is the whole list
    assert (
        max(n for _, n in after) == 22
    )  # 9 earlier turns (the handed-over one with its call and result) and the question
    assert [n for _, n in after[-10:]] == [20] * 10  # the system prompt, 9 whole turns and the question
    assert kept_after == kept_before == 2 * TURNS + 2  # the list keeps every message


def test_a_function_returning_an_agent_hands_it_the_whole_conversation(monkeypatch):
    [handoff, _] = findings(APP)
    assert (handoff.rule_id, handoff.span.line, handoff.span.col) == ("AGENT-OVERSIZED-HANDOFF", 9, 12)
    sent, _ = run(APP, monkeypatch)
    desk = [n for instructions, n in sent if instructions == "Trace lost bags."]
    # its first call: the system prompt, the six earlier turns, the question, the transfer call and its result
    assert desk[0] == 1 + 2 * LOST + 3
    assert desk[-1] == 2 * TURNS + 2  # and every turn after it, whole
