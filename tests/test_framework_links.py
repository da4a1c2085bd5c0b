"""Framework facts across modules (chatbound.analysis.project.users) and the pinned framework version
(chatbound.frameworks.versions)."""

from __future__ import annotations

import shutil
import textwrap

import pytest
from conftest import FIXTURES

from chatbound.analysis.project.users import project_links
from chatbound.frameworks.versions import pinned_in
from chatbound.run.config import Settings
from chatbound.run.runner import run


def _write(folder, files: dict[str, str]) -> dict[str, bytes]:
    sources = {}
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        if name.endswith(".py"):
            sources[str(path)] = path.read_bytes()
    return sources


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("uv.lock", '[[package]]\nname = "openai-agents"\nversion = "0.6.4"\nsource = { registry = "x" }\n', "0.6.4"),
        ("poetry.lock", '[[package]]\nname = "openai_agents"\nversion = "0.7.0"\n', "0.7.0"),
        ("requirements.txt", "fastapi\nopenai-agents==0.6.1  # pinned\n", "0.6.1"),
        ("requirements.txt", "openai-agents[viz]~=0.6.2\n", "0.6.2"),
        ("pyproject.toml", '[project]\ndependencies = ["fastapi", "openai-agents==0.24.0"]\n', "0.24.0"),
        ("pyproject.toml", '[tool.poetry.dependencies]\nopenai-agents = "^0.6.3"\n', "0.6.3"),
        ("requirements.txt", "openai-agents>=0.6\n", None),  # a range with no upper bound is no pin
        ("requirements.txt", "openai\n", None),
    ],
)
def test_pinned_version_is_read_from_the_declaration(tmp_path, name, text, expected):
    (tmp_path / name).write_text(text)
    (tmp_path / "app").mkdir()
    read: list[str] = []
    found = pinned_in(str(tmp_path / "app"), "openai-agents", read)
    assert found == ((expected, name) if expected else None)
    assert str(tmp_path / name) in read  # a cached result is checked against it


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("requirements.txt", "google-adk>=1.28\n", "1.28"),
        ("pyproject.toml", '[project]\ndependencies = ["google-adk>=1.27.0,<2"]\n', "1.27.0"),
        ("pyproject.toml", '[tool.poetry.dependencies]\ngoogle-adk = ">=1.30,<3"\n', "1.30"),
        ("requirements.txt", "google-adk==1.22.0\n", "1.22.0"),
        ("requirements.txt", "google-adk\n", None),
        ("requirements.txt", "google-adk<2\n", None),  # no floor
    ],
)
def test_the_lowest_version_allowed_is_a_pin_or_the_bound_of_a_range(tmp_path, name, text, expected):
    (tmp_path / name).write_text(text)
    found = pinned_in(str(tmp_path), "google-adk", [], floor=True)
    assert found == ((expected, name) if expected else None)


def test_no_declaration_up_to_the_repository_is_no_pin(tmp_path):
    (tmp_path / "requirements.txt").write_text("openai-agents==0.6.4\n")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    assert pinned_in(str(tmp_path / "repo"), "openai-agents", []) is None


GRAPH = """
    from langgraph.graph import StateGraph
    from langgraph.checkpoint.memory import MemorySaver
    from .nodes import chatbot
    from .state import State

    builder = StateGraph(State)
    builder.add_node("chatbot", chatbot)
    graph = builder.compile({saver})
"""


def test_an_importer_registering_a_node_says_so_and_names_its_checkpointer(tmp_path):
    sources = _write(
        tmp_path,
        {
            "state.py": "from typing import Annotated\nfrom langgraph.graph.message import add_messages\n"
            "class Base:\n    messages: Annotated[list, add_messages]\nclass State(Base):\n    topic: str\n",
            "nodes.py": "from .state import State\ndef chatbot(state: State):\n    return state\n",
            "graph.py": GRAPH.format(saver="checkpointer=MemorySaver()"),
        },
    )
    links = project_links(sources, str(tmp_path), lambda path: path.rsplit("/", 1)[-1])
    nodes = links[str(tmp_path / "nodes.py")]
    assert [(m.tag, m.place.path, m.place.span.line) for m in nodes.given["chatbot"]] == [
        ("langgraph.node", "graph.py", 8),
        ("langgraph.checkpointer", "graph.py", 9),
    ]
    assert [(m.tag, m.place.span.line) for m in nodes.seen["State"]] == [("langgraph.state:messages", 5)]
    assert set(nodes.modules) == {str(tmp_path / "graph.py"), str(tmp_path / "state.py")}


def test_a_graph_compiled_without_a_checkpointer_gives_its_nodes_none(tmp_path):
    sources = _write(
        tmp_path,
        {
            "nodes.py": "def chatbot(state):\n    return state\n",
            "graph.py": GRAPH.format(saver=""),
        },
    )
    links = project_links(sources, str(tmp_path), str)
    assert [m.tag for m in links[str(tmp_path / "nodes.py")].given["chatbot"]] == ["langgraph.node"]


def test_langgraph_json_serves_a_module_with_the_platform_checkpointer(tmp_path):
    sources = _write(
        tmp_path,
        {
            "langgraph.json": '{\n  "graphs": {\n    "a": "./src/agent.py:graph",\n    "b": {"path": "./b.py:g"},\n'
            '    "c": "my_pkg.graph:graph"\n  }\n}\n',
            "src/agent.py": "from langgraph.graph import StateGraph\n",
            "b.py": "from langgraph.graph import StateGraph\n",
        },
    )
    links = project_links(sources, str(tmp_path), lambda path: path[len(str(tmp_path)) + 1 :])
    [served] = links[str(tmp_path / "src" / "agent.py")].given[""]
    assert (served.tag, served.place.path, served.place.span.line) == ("langgraph.served:graph", "langgraph.json", 3)
    assert links[str(tmp_path / "b.py")].given[""][0].place.span.line == 4
    assert str(tmp_path / "langgraph.json") in links[str(tmp_path / "b.py")].modules


@pytest.mark.parametrize(
    "run_line, continued",
    [
        ("await Runner.run(triage, text, session=SQLiteSession(user))", True),
        ("await Runner.run(triage, text)", False),
    ],
)
def test_an_importer_running_agents_on_a_continuing_conversation_says_so(tmp_path, run_line, continued):
    sources = _write(
        tmp_path,
        {
            "desk.py": "from agents import Agent\ntriage = Agent(name='t', handoffs=[])\n",
            "server.py": f"from agents import Runner, SQLiteSession\nfrom desk import triage\n"
            f"async def answer(user, text):\n    return {run_line}\n",
        },
    )
    links = project_links(sources, str(tmp_path), str)
    given = links.get(str(tmp_path / "desk.py"))
    assert (given is not None and [m.tag for m in given.given["triage"]] == ["agents.continued"]) is continued


def _messages(folder) -> dict[tuple[str, int, int], str]:
    result = run([folder], Settings(root=folder))
    return {(f.path, f.span.line, f.span.col): f.message for f in result.active}


def test_the_pinned_version_says_how_the_handoff_passes_the_history(monkeypatch):
    folder = FIXTURES / "frameworks_project"
    monkeypatch.chdir(folder)
    messages = _messages(folder)
    pinned = messages[("pinned_desk/desk_agents.py", 7, 77)]
    assert "folded into one assistant message that still holds every item" in pinned
    assert "openai-agents 0.6.4 in uv.lock nests handoff history by default" in pinned
    assert "runs continue the conversation in pinned_desk/server.py:10" in pinned
    assert "openai-agents 0.7+ assumed: the project pins no version" in messages[("desk/desk_agents.py", 11, 29)]


def test_editing_the_importer_rechecks_the_agents_module(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES / "frameworks_project" / "desk", tmp_path / "desk")
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path)
    assert len(run([tmp_path], settings, cache=True).active) == 3
    server = tmp_path / "desk" / "server.py"
    server.write_text(server.read_text().replace(", session=session", ""))
    again = run([tmp_path], settings, cache=True)
    assert again.active == [] and again.cached == 0


def test_langgraph_json_serves_a_dotted_module_from_its_local_packages(tmp_path):
    sources = _write(
        tmp_path,
        {
            "langgraph.json": '{\n  "dependencies": ["."],\n  "graphs": {\n    "a": "desk.graph:graph",\n'
            '    "b": "helpdesk.graph:graph"\n  }\n}\n',
            "desk/graph.py": "from langgraph.graph import StateGraph\n",
            "src/helpdesk/graph.py": "from langgraph.graph import StateGraph\n",
            "src/helpdesk/tools.py": "from langgraph.graph import StateGraph\n",
        },
    )
    links = project_links(sources, str(tmp_path), lambda path: path[len(str(tmp_path)) + 1 :])
    served = {
        path[len(str(tmp_path)) + 1 :]: [(m.tag, m.place.span.line) for m in found.given[""]]
        for path, found in links.items()
        if "" in found.given
    }
    assert served == {
        "desk/graph.py": [("langgraph.served:graph", 4)],
        "src/helpdesk/graph.py": [("langgraph.served:graph", 5)],
    }


def test_a_state_subclass_in_a_module_naming_no_framework_is_a_message_state(tmp_path):
    sources = _write(
        tmp_path,
        {
            "base.py": "from typing import Annotated, TypedDict\nfrom langgraph.graph.message import add_messages\n"
            "class Conversation(TypedDict):\n    messages: Annotated[list, add_messages]\n"
            "class Audit(TypedDict):\n    notes: list\n",
            "state.py": "from base import Audit, Conversation\nclass Desk(Conversation):\n    topic: str\n"
            "class Ledger(Audit):\n    desk: str\n",
            "nodes.py": "from langgraph.graph import StateGraph\nfrom state import Desk, Ledger\ndef chatbot(state: Desk):\n    return state\n",
        },
    )
    links = project_links(sources, str(tmp_path), lambda path: path.rsplit("/", 1)[-1])
    nodes = links[str(tmp_path / "nodes.py")]
    assert [(m.tag, m.place.path, m.place.span.line) for m in nodes.seen["Desk"]] == [
        ("langgraph.state:messages", "base.py", 4)
    ]
    assert "Ledger" not in nodes.seen
    assert set(nodes.modules) == {str(tmp_path / "state.py"), str(tmp_path / "base.py")}


def test_editing_the_base_state_rechecks_the_node_of_the_subclass(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES / "frameworks_project" / "inherited_state", tmp_path / "desk")
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path)
    assert [(f.path, f.span.line) for f in run([tmp_path], settings, cache=True).active] == [("desk/nodes.py", 11)]
    base = tmp_path / "desk" / "base_state.py"
    base.write_text(base.read_text().replace("Annotated[list, add_messages]", "list"))
    assert run([tmp_path], settings, cache=True).active == []


def test_a_node_made_by_a_factory_of_another_module_keeps_the_thread_only_on_a_checkpointed_graph(
    tmp_path, monkeypatch
):
    shutil.copytree(FIXTURES / "frameworks_project" / "node_factory", tmp_path / "desk")
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path)
    found = run([tmp_path], settings).active
    assert [(f.path, f.span.line, f.span.col) for f in found] == [("desk/support/assistants/factory.py", 26, 46)]
    assert [(r.path, r.span.line) for r in found[0].related] == [
        ("desk/support/graph.py", 17),
        ("desk/support/graph.py", 22),
    ]
    graph = tmp_path / "desk" / "support" / "graph.py"
    graph.write_text(graph.read_text().replace("builder.compile(checkpointer=saver)", "builder.compile()"))
    assert run([tmp_path], settings).active == []


def test_a_factory_is_found_through_its_package_and_not_through_a_script_of_the_same_name(tmp_path):
    sources = _write(
        tmp_path,
        {
            "app/app.py": "print('the web app')\n",
            "app/assistants/factory.py": "from langgraph.graph import MessagesState\ndef make_node(chain):\n    return chain\n"
            "def build(text):\n    return text\n",
            "app/graph.py": "from langgraph.graph import StateGraph\nfrom langgraph.checkpoint.memory import MemorySaver\n"
            "from app.assistants import factory\nbuilder = StateGraph(dict)\nchain = factory.build('hi')\n"
            "builder.add_node('a', factory.make_node(chain))\ngraph = builder.compile(checkpointer=MemorySaver())\n",
        },
    )
    links = project_links(sources, str(tmp_path), lambda path: path[len(str(tmp_path)) + 1 :])
    given = links[str(tmp_path / "app" / "assistants" / "factory.py")].given
    assert [(m.tag, m.place.path, m.place.span.line) for m in given["make_node"]] == [
        ("langgraph.checkpointer", "app/graph.py", 7),
        ("langgraph.factory:0:build", "app/graph.py", 6),
    ]


def test_agents_run_on_a_streamlit_session_chat_hand_over_the_whole_conversation(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES / "frameworks_project" / "streamlit_trip", tmp_path / "trip")
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path, select=["AGENT-OVERSIZED-HANDOFF"])
    found = run([tmp_path], settings).active
    assert [(f.path, f.span.line, f.span.col) for f in found] == [
        ("trip/trip_agents.py", 7, 103),
        ("trip/trip_agents.py", 7, 112),
    ]
    assert "runs continue the conversation in trip/app.py:15" in found[0].message
    app = tmp_path / "trip" / "app.py"
    sent = "Runner.run(planner, st.session_state.chat)"
    source = app.read_text()
    app.write_text(source.replace(sent, "Runner.run(planner, [dict(m) for m in st.session_state.chat])"))
    assert len(run([tmp_path], settings).active) == 2  # a list made from the session's chat
    app.write_text(source.replace(sent, "Runner.run(planner, text)"))
    assert run([tmp_path], settings).active == []  # the chat is kept for display; each run gets one message


def test_a_specialist_routed_to_by_a_tool_call_is_reported_where_the_graph_registers_it(tmp_path, monkeypatch):
    """The router, the node factory and the chain builders in desk/assistants.py, the graph in desk/graph.py."""
    shutil.copytree(FIXTURES / "frameworks_project" / "routed_team", tmp_path / "team")
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path, select=["AGENT-OVERSIZED-HANDOFF"])
    found = run([tmp_path], settings).active
    assert [(f.path, f.span.line, f.span.col) for f in found] == [("team/desk/graph.py", 33, 13)]
    assert [(r.path, r.span.line, r.span.col) for r in found[0].related] == [
        ("", 36, 5),
        ("team/desk/assistants.py", 47, 30),
        ("team/desk/assistants.py", 35, 14),
    ]
    assistants = tmp_path / "team" / "desk" / "assistants.py"
    routed = assistants.read_text()
    assistants.write_text(routed.replace('return f"enter_{team}"', 'return Send(f"enter_{team}", {"messages": []})'))
    assert run([tmp_path], settings).active == []  # a Send gives the entry node only its arg
    assistants.write_text(
        routed.replace(
            '("placeholder", "{messages}")])\n    chain', 'MessagesPlaceholder("messages", n_messages=8)])\n    chain'
        )
    )
    assert run([tmp_path], settings).active == []  # the team's prompt keeps the last 8 messages
    graph = tmp_path / "team" / "desk" / "graph.py"
    assistants.write_text(routed)
    graph.write_text(graph.read_text().replace("checkpointer=InMemorySaver()", ""))
    assert run([tmp_path], settings).active == []
