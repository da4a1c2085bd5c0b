"""The import-only qualified names the rules read instead of LibCST's QualifiedNameProvider."""

import libcst as cst
import pytest

from chatbound.syntax.qualified import QualifiedNames

SOURCE = """\
import os.path
import numpy as np
from crewai import Agent as CrewAgent
from .llm import chat
from .. import prompts
try:
    from litellm import trim_messages
except ImportError:
    pass
else:
    import json
finally:
    import re
if True: import yaml
def f():
    from google.adk.agents import LlmAgent
    class C:
        import inner.mod as im
match x:
    case 1:
        import casemod
while False:
    pass
else:
    from a.b import (c,
                     d as e)
call_sites = [
    CrewAgent(), chat(), prompts.SYSTEM, trim_messages(), json.dumps, re.compile, yaml.load,
    LlmAgent(), im.f, casemod.x, c, e, os.path.join, np.array, local.thing, print, (x)().y,
]
"""


def _names() -> list[set[str]]:
    module = cst.parse_module(SOURCE)
    qualified = QualifiedNames(module)
    elements = module.body[-1].body[0].value.elements
    return [
        {q.name for q in qualified.get(e.value.func if isinstance(e.value, cst.Call) else e.value, set())}
        for e in elements
    ]


@pytest.mark.parametrize(
    "index, expected",
    list(
        enumerate(
            [
                {"crewai.Agent"},
                {".llm.chat"},
                {"..prompts.SYSTEM"},
                {"litellm.trim_messages"},
                {"json.dumps"},
                {"re.compile"},
                {"yaml.load"},
                {"google.adk.agents.LlmAgent"},
                {"inner.mod.f"},
                {"casemod.x"},
                {"a.b.c"},
                {"a.b.d"},
                {"os.path.join"},
                {"numpy.array"},
                set(),
                set(),
                set(),
            ]
        )
    ),
)
def test_imported_names_anywhere_in_the_module(index, expected):
    assert _names()[index] == expected
