"""The engine is a library of its own: importing it loads no LibCST and no analyzer module."""

import json
import subprocess
import sys

import chatbound.compaction as compaction

PUBLIC_API = """
Message ToolCall Event EventType CompactionBoundary InMemoryEventStore SQLiteEventStore VersionConflict
SessionService CompactionRequest CompactionResult SummaryRequest ModelSummarizer TurnCountTrigger
TokenCountTrigger any_of WindowCompactionStrategy last_events last_turns token_budget event_text
bounded_view from_openai to_openai from_anthropic to_anthropic
""".split()


def test_the_public_api_is_exported_as_written():
    assert sorted(compaction.__all__) == sorted(PUBLIC_API)
    assert all(hasattr(compaction, name) for name in PUBLIC_API)


def test_importing_the_engine_loads_nothing_of_the_analyzer():
    code = (
        "import json, sys, chatbound.compaction\n"
        "print(json.dumps([m for m in sys.modules if m.startswith(('chatbound', 'libcst'))]))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    modules = json.loads(loaded)
    assert not [m for m in modules if m.startswith("libcst")]
    assert {m for m in modules if not m.startswith("chatbound.compaction")} == {"chatbound"}
