"""`check --fix` on histories a framework keeps: each fixture file copied, fixed, compared with
the edit written out by hand, re-parsed and re-checked; the lines that store the history stay.

The edits were run against the SDKs before they were written here (langchain-classic 1.0.8,
langchain-core 1.8.3, openai-agents 0.24.0, llama-index-core 0.14.25, semantic-kernel 1.45.0).
"""

from __future__ import annotations

import shutil

import libcst as cst
import pytest

from conftest import FIXTURES, invoke

RULE = "MEMORY-UNBOUNDED-HISTORY"
TRIM = (
    'RunnablePassthrough.assign(history=itemgetter("history") | trim_messages(strategy="last", '
    'token_counter=count_tokens_approximately, max_tokens=4000, start_on="human", include_system=True)) | chain'
)

# fixture path -> (lines replaced: old -> new, the import lines added after `after`, lines that must stay)
CASES = {
    "memory/onboarding_tutor_chain.py": (
        {
            '        self.memory = ConversationBufferMemory(human_prefix="New hire", ai_prefix="Buddy")':
            '        self.memory = ConversationBufferWindowMemory(k=10, human_prefix="New hire", ai_prefix="Buddy")',
        },
        ("from langchain_openai import ChatOpenAI", ["from langchain.memory import ConversationBufferWindowMemory"]),
        ["            memory=self.memory,", "            return self.chain.predict(input=question)"],
    ),
    "memory_dev/llm_chain_buffer.py": (
        {
            '    memory=ConversationBufferMemory(memory_key="chat_history"),':
            '    memory=ConversationBufferWindowMemory(k=10, memory_key="chat_history"),',
        },
        ("from langchain_openai import ChatOpenAI", ["from langchain.memory import ConversationBufferWindowMemory"]),
        ["    return chain.predict(question=question)"],
    ),
    "memory/warranty_chat_runnable.py": (
        {
            'with_history = RunnableWithMessageHistory(chain, get_session_history, input_messages_key="question", '
            'history_messages_key="history")':
            f'with_history = RunnableWithMessageHistory({TRIM}, get_session_history, input_messages_key="question", '
            'history_messages_key="history")',
        },
        ("from pydantic import BaseModel", [
            "from operator import itemgetter",
            "from langchain_core.runnables import RunnablePassthrough",
            "from langchain_core.messages import trim_messages",
            "from langchain_core.messages.utils import count_tokens_approximately",
        ]),
        ["        _store[session_id] = InMemoryChatMessageHistory()", "    return _store[session_id]"],
    ),
    "memory/concierge_agent.py": (
        {
            '            self._sessions[room] = SQLiteSession(f"room-{room}", self.db_path)':
            '            self._sessions[room] = SQLiteSession(f"room-{room}", self.db_path, '
            'session_settings=SessionSettings(limit=40))',
        },
        ("from agents import Agent, Runner, SQLiteSession, function_tool", ["from agents import SessionSettings"]),
        ["            result = await Runner.run(concierge, text, session=session)"],
    ),
    "memory/museum_kiosk_llamaindex.py": (
        {
            "            for chunk in self.llm.stream_chat(self.messages):":
            "            for chunk in self.llm.stream_chat([self.messages[0], *ChatMemoryBuffer.from_defaults("
            "token_limit=3000, chat_history=self.messages[1:]).get()]):",
        },
        ("from llama_index.llms.openai import OpenAI", ["from llama_index.core.memory import ChatMemoryBuffer"]),
        ["        self.messages.append(ChatMessage(role=role, content=text))",
         '            ChatMessage(role=MessageRole.SYSTEM, content=f"You are a guide in the {gallery} gallery."),'],
    ),
    "memory/faq_bot_kernel.py": (
        {
            "            answer = await self.chat.get_chat_message_content(":
            "            reduced = ChatHistoryTruncationReducer(target_count=20, messages=list(self.history.messages))\n"
            "            await reduced.reduce()\n"
            "            answer = await self.chat.get_chat_message_content(",
            "                chat_history=self.history,": "                chat_history=reduced,",
        },
        ("from semantic_kernel.contents import ChatHistory", ["from semantic_kernel.contents import ChatHistoryTruncationReducer"]),
        ["        self.history.add_user_message(question)", "        self.history.add_assistant_message(str(answer))",
         '        self.history = ChatHistory(system_message="You answer questions about employee benefits only.")'],
    ),
    "memory_dev/interview_coach_llamaindex.py": (
        {
            "        response = self.engine.chat(candidate_answer, chat_history=self.transcript)":
            "        response = self.engine.chat(candidate_answer, chat_history=ChatMemoryBuffer.from_defaults("
            "token_limit=3000, chat_history=list(self.transcript)).get())",
        },
        ("from llama_index.llms.openai import OpenAI", ["from llama_index.core.memory import ChatMemoryBuffer"]),
        ["        self.transcript.append(ChatMessage(role=MessageRole.USER, content=candidate_answer))",
         "        self.transcript.append(ChatMessage(role=MessageRole.ASSISTANT, content=str(response)))"],
    ),
}


def _expected(original: str, replaced: dict, imports: tuple) -> str:
    anchor, added = imports
    lines = original.splitlines()
    out = []
    for line in lines:
        out.append(replaced.get(line, line))
        if line == anchor:
            out.extend(added)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("path", sorted(CASES))
def test_fix_bounds_what_is_sent_and_keeps_the_stored_history(tmp_path, path):
    replaced, imports, kept = CASES[path]
    original = (FIXTURES / path).read_text()
    assert set(replaced) <= set(original.splitlines()) and set(kept) <= set(original.splitlines())
    target = tmp_path / path.rsplit("/", 1)[1]
    shutil.copy(FIXTURES / path, target)
    assert f"{RULE}" in invoke("check", "--select", RULE, target.name, cwd=tmp_path).output

    fixed = invoke("check", "--fix", "--select", RULE, target.name, cwd=tmp_path)
    text = target.read_text()
    assert text == _expected(original, replaced, imports), fixed.output
    cst.parse_module(text)
    assert set(kept) <= set(text.splitlines())  # the lines that store the history are untouched
    rechecked = invoke("check", "--select", RULE, target.name, cwd=tmp_path)
    assert RULE not in rechecked.output and rechecked.exit_code == 0


NO_EDIT = {
    "memory/it_helpdesk_pydantic_ai.py": "ProcessHistory",
    "memory_dev/pydantic_ai_desk.py": "ProcessHistory",
    "memory/gemini_chat_rooms.py": "client.chats.create",
    "memory_dev/gemini_legacy_sessions.py": "client.chats.create",
    "memory/mentor_responses_chain.py": "truncation=",
    "memory/research_assistant_threads.py": "to_input_list()` returns",
}


@pytest.mark.parametrize("path", sorted(NO_EDIT))
def test_no_edit_where_the_framework_offers_no_bound_that_keeps_the_history(tmp_path, path):
    target = tmp_path / path.rsplit("/", 1)[1]
    shutil.copy(FIXTURES / path, target)
    result = invoke("check", "--fix", "--unsafe-fixes", "--output-format", "json", "--select", RULE, target.name, cwd=tmp_path)
    assert target.read_bytes() == (FIXTURES / path).read_bytes()
    assert result.exit_code == 1 and NO_EDIT[path] in result.output
