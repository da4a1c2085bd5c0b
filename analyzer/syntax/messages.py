"""What a single expression looks like as chat: a message's role, a bounding call or slice.

Pure syntax, no metadata: `role_of(expr)`, `holds_tool_traffic(expr)`, `is_count_slice(sub)`,
`is_bounding_name(name)`, `callee_name(call)` (`ast_callee_name` on CPython's tree). The
dataflow that uses them lives in `chatbound.analysis.histories`.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

ROLE_CLASSES = {
    "HumanMessage": "user",
    "UserMessage": "user",
    "ChatMessageUser": "user",
    "AIMessage": "assistant",
    "AssistantMessage": "assistant",
    "ChatMessageAssistant": "assistant",
    "SystemMessage": "system",
    "ChatMessageSystem": "system",
    "DeveloperMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
    "ToolResultMessage": "tool",
    "FunctionExecutionResultMessage": "tool",
    "ModelRequest": "user",
    "ModelResponse": "assistant",
}
ROLE_WORDS = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}
TOOL_TYPES = ("tool_result", "function_call_output", "tool_use", "function_call")
BOUNDING = re.compile(
    r"trim|window|last_|_last|recent|truncat|limit|bound|budget|fit_|_fit|compact|summar|prune|"
    r"reduce|tail|clip|shrink|evict|condense|keep|cap_|_cap",
    re.I,
)
NOT_HISTORY = re.compile(
    r"^(len|sum|min|max|any|all|bool|int|float|isinstance|hash|id|type|print|range|repr)$|"
    r"count|token|num_|size|length|log|save|store|persist|write|print|is_|has_|render|display|emit|"
    r"publish|send_json|jsonify|response|insert|update|put",
    re.I,
)
CHAT_NAME = re.compile(r"hist|messages|msgs|conversation|convo|chat|transcript|dialog|turns|memory|context", re.I)


def window_triggers() -> tuple[tuple[re.Pattern[bytes], re.Pattern[bytes]], ...]:
    """A count window (`h[-N:]`, `del h[:-N]`, `deque(maxlen=N)`, `pop(0)`) in a file that builds
    a system message or tool traffic (what such a window can cut), derived from the tables
    above: the pre-check of the window rule where no model call is in sight."""
    words = [w for w, role in ROLE_WORDS.items() if role in ("system", "tool")] + [*TOOL_TYPES, "tool_calls"]
    classes = [c.lower() for c, role in ROLE_CLASSES.items() if role in ("system", "tool")]
    return (
        (
            re.compile(
                rb"[\"'](?:%s)[\"']|\b(?:%s)\b"
                % (b"|".join(w.encode() for w in words), b"|".join(c.encode() for c in classes)),
                re.I,
            ),
            re.compile(rb"\[\s*-[^\]:]*:\s*\]|\[\s*:\s*-|\bmaxlen\s*=|\.\s*pop(?:left)?\s*\("),
        ),
    )


def string(node: cst.CSTNode | None) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def callee_name(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def ast_callee_name(call: ast.Call) -> str:
    """`callee_name` on CPython's tree (the rules' `may_report_tree`)."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def class_name(call: cst.Call) -> str:
    """`callee_name` through a generic alias: `Agent[Deps](...)` builds an `Agent`."""
    func = call.func.value if isinstance(call.func, cst.Subscript) else call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def ast_class_name(call: ast.Call) -> str:
    """`class_name` on CPython's tree."""
    func = call.func.value if isinstance(call.func, ast.Subscript) else call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _dict_get(node: cst.Dict, key: str) -> cst.BaseExpression | None:
    for element in node.elements:
        if isinstance(element, cst.DictElement) and string(element.key) == key:
            return element.value
    return None


def role_of(expr: cst.CSTNode) -> str | None:
    """'user', 'assistant', 'system', 'tool' for a message-shaped expression; 'message' if the
    role is not a literal; None when the expression does not look like a chat message."""
    if isinstance(expr, cst.Dict):
        role = _dict_get(expr, "role")
        if role is not None:
            word = string(role)
            if word is None:
                return "message"
            if _dict_get(expr, "tool_calls") is not None:
                return "tool"
            return ROLE_WORDS.get(word.lower(), "message")
        kind = string(_dict_get(expr, "type"))
        if kind in TOOL_TYPES:
            return "tool"
        if _dict_get(expr, "content") is not None or _dict_get(expr, "parts") is not None:
            return "message"
        return None
    if isinstance(expr, cst.Tuple) and len(expr.elements) == 2:
        word = string(expr.elements[0].value)
        return ROLE_WORDS.get(word.lower()) if word else None
    if isinstance(expr, cst.Call):
        name = callee_name(expr)
        if name in ROLE_CLASSES:
            return ROLE_CLASSES[name]
        for arg in expr.args:
            if arg.keyword is not None and arg.keyword.value == "role":
                word = string(arg.value)
                return ROLE_WORDS.get(word.lower(), "message") if word else "message"
        if name.endswith("Message") or name in ("Content", "ChatMessage"):
            return "message"
        if name in ("new_messages", "all_messages", "to_input_list", "model_dump", "to_dict"):
            return "message"
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("message", "output", "content"):
        return "assistant"
    return None


def message_roles(expr: cst.CSTNode) -> list[str]:
    """Roles of the messages an `append`/`extend`/`+=` operand adds (a list adds several)."""
    if isinstance(expr, (cst.List, cst.Tuple)) and not (isinstance(expr, cst.Tuple) and role_of(expr)):
        return [r for e in expr.elements for r in message_roles(e.value)]
    role = role_of(expr)
    return [role] if role else []


def holds_tool_traffic(expr: cst.CSTNode) -> bool:
    """A tool result, an assistant message carrying tool calls, or content with tool blocks:
    what a count window can cut from its call. Not OpenAI's legacy function result."""
    if is_legacy_function_result(expr):
        return False
    if "tool" in message_roles(expr):
        return True
    if isinstance(expr, cst.Dict):
        content = _dict_get(expr, "content")
        if isinstance(content, cst.List):
            return any(holds_tool_traffic(e.value) for e in content.elements)
    return False


def is_legacy_function_result(expr: cst.CSTNode) -> bool:
    """`{"role": "function", "name": ..., "content": ...}`: OpenAI's legacy function message
    names its function but no call (openai 1.x ChatCompletionFunctionMessageParam has no
    call id), so the API cannot reject it for a call cut away. Gemini's `role: "function"`
    turn carries `parts` and must follow its call."""
    if not isinstance(expr, cst.Dict) or string(_dict_get(expr, "role")) != "function":
        return False
    return _dict_get(expr, "name") is not None and _dict_get(expr, "parts") is None


def is_negative(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)


def slice_of(node: cst.Subscript) -> cst.Slice | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
        return node.slice[0].slice
    return None


def is_whole_slice(node: cst.Subscript) -> bool:
    """`h[:]`, `h[1:]`, `h[:-1]`: all of the list but a fixed few at its ends; `h[::-1]`: all
    of it, reversed."""
    part = slice_of(node)
    if part is None:
        return False
    if part.step is not None:
        return part.lower is None and part.upper is None
    lower_ok = part.lower is None or isinstance(part.lower, cst.Integer)
    upper_ok = part.upper is None or (is_negative(part.upper) and isinstance(part.upper.expression, cst.Integer))
    return lower_ok and upper_ok


def is_count_slice(node: cst.Subscript) -> bool:
    """`h[-N:]` (or `h[-N:-1]`): the last N items, whatever they are."""
    part = slice_of(node)
    return part is not None and is_negative(part.lower)


def is_bounding_name(name: str) -> bool:
    return bool(BOUNDING.search(name))


NUMERIC_NAME = re.compile(
    r"latenc|loss|score|count|tokens|elapsed|duration|_ms$|seconds|metric|error|status|cost|time", re.I
)


def is_textual(expr: cst.CSTNode) -> bool:
    """Text or a record of text (a dict, an f-string), not a number or a metric."""
    if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):  # `"\nUser: " + text`
        return is_textual(expr.left) or is_textual(expr.right)
    if isinstance(expr, cst.Dict):
        return not any(
            isinstance(e, cst.DictElement) and NUMERIC_NAME.search(string(e.key) or "") for e in expr.elements
        )
    if isinstance(expr, cst.Tuple):  # (question, answer) pairs
        return all(
            isinstance(e.value, (cst.SimpleString, cst.FormattedString))
            or (isinstance(e.value, cst.Name) and not NUMERIC_NAME.search(e.value.value))
            for e in expr.elements
        )
    return False


def is_numeric(expr: cst.CSTNode) -> bool:
    """A number or a measurement (`time.perf_counter() - t0`, `usage.total_tokens`, `loss`)."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.BinaryOperation, cst.UnaryOperation)):
        return True
    if isinstance(expr, cst.Call):
        return callee_name(expr) in ("float", "int", "round", "len", "sum", "perf_counter", "time", "monotonic", "item")
    if isinstance(expr, cst.Name):
        return bool(NUMERIC_NAME.search(expr.value))
    if isinstance(expr, cst.Attribute):
        return bool(NUMERIC_NAME.search(expr.attr.value))
    return False
