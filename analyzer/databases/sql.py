"""SQL written by hand, through any DB-API 2.0 driver (PEP 249: sqlite3, psycopg, mysql,
asyncpg's `fetch`) or SQLAlchemy 2.1 `text(...)`.

Reads: a call given a `SELECT ... FROM <table>` with no `LIMIT` (`conn.execute(sql, args)`,
`pd.read_sql(sql, con)`, a helper that runs it), the rows fetched from it (`.fetchall()`,
`.all()`, `.mappings()`, and `cur.fetchall()` after `cur.execute(sql)`). Bounded: `LIMIT N`,
`TOP N`, `FETCH FIRST N ROWS`, `fetchmany(N)`, `fetchone()`.
Writes: an `INSERT INTO <table>` adds a row; a `DELETE FROM <table>` with a `LIMIT` or an
`OFFSET` (keep the newest N) trims it.
"""

from __future__ import annotations

import re

import libcst as cst

from chatbound.syntax.messages import callee_name, string

SELECT = re.compile(r"^\s*SELECT\b.*?\bFROM\s+[\"`\[]?(\w+)", re.I | re.S)
INSERT = re.compile(r"^\s*INSERT\s+(?:OR\s+\w+\s+)?INTO\s+[\"`\[]?(\w+)", re.I)
DELETE = re.compile(r"^\s*DELETE\s+FROM\s+[\"`\[]?(\w+)", re.I)
BOUNDED = re.compile(r"\bLIMIT\b|\bTOP\s*\(?\s*[\d?:%$]|\bFETCH\s+(?:FIRST|NEXT)\b|\bOFFSET\b", re.I)
SQL_START = re.compile(r"\s*(?:SELECT|INSERT|DELETE)\b", re.I)
ROWS = frozenset("fetchall all mappings scalars".split())  # every row of what ran
EXECUTES = frozenset(
    "execute executemany exec_driver_sql fetch read_sql read_sql_query".split()
)  # given the SQL by name too


def read(facts, call: cst.Call, depth: int = 0) -> str | None:
    name = callee_name(call)
    if name in ROWS and isinstance(call.func, cst.Attribute) and depth < 3:
        return _rows_of(facts, call.func.value, call, depth)
    for arg in call.args:
        text = statement(facts, arg.value, name in EXECUTES)
        if text is not None:
            found = SELECT.match(text)
            return f"sql:{found.group(1)}" if found and not BOUNDED.search(text) else None
        if isinstance(arg.value, cst.Attribute) and arg.value.attr.value in ROWS and depth < 3:
            return _rows_of(facts, arg.value.value, call, depth)  # `run(cursor.fetchall)`: a helper fetches
    return None


def writes(facts, call: cst.Call) -> list[tuple]:
    named = callee_name(call) in EXECUTES
    for index, arg in enumerate(call.args):
        text = statement(facts, arg.value, named)
        if text is None:
            continue
        if INSERT.match(text):
            values = tuple(a.value for a in call.args[index + 1 :]) or (arg.value,)
            return [(f"sql:{INSERT.match(text).group(1)}", "push", values)]
        if DELETE.match(text) and BOUNDED.search(text):
            return [(f"sql:{DELETE.match(text).group(1)}", "trim", ())]
        return []
    return []


def statement(facts, expr: cst.CSTNode, named: bool = False) -> str | None:
    """The SQL text of an argument: a string, an f-string's literal parts, `text("...")`, or
    (`named`: an argument of `execute`) a name bound to one."""
    if isinstance(expr, cst.Call) and callee_name(expr) == "text" and expr.args:
        expr = expr.args[0].value
    if isinstance(expr, cst.SimpleString) and not SQL_START.match(expr.value.lstrip("rRbBuU").lstrip("\"'")):
        return None  # not SQL: skip evaluating the literal (most strings of a module)
    if isinstance(expr, cst.FormattedString):
        first = expr.parts[0] if expr.parts else None
        if not (isinstance(first, cst.FormattedStringText) and SQL_START.match(first.value)):
            return None
        return "".join(p.value if isinstance(p, cst.FormattedStringText) else "?" for p in expr.parts)
    text = string(expr)
    if text is not None:
        return text
    if isinstance(expr, cst.Name) and named:
        value = facts.assignment_before(expr)
        return statement(facts, value) if isinstance(value, cst.BaseExpression) else None
    return None


def _rows_of(facts, source: cst.BaseExpression, at: cst.Call, depth: int) -> str | None:
    """The table behind rows fetched from `source`: a call that ran a SELECT, or a cursor
    whose last `execute(...)` before `at`, in the same function, did."""
    if isinstance(source, cst.Await):
        source = source.expression
    if isinstance(source, cst.Call):
        return read(facts, source, depth + 1)
    if not isinstance(source, cst.Name):
        return None
    value = facts.assignment_before(source)
    if isinstance(value, cst.Await):
        value = value.expression
    if isinstance(value, cst.Call) and callee_name(value) not in ("cursor", "connect"):
        found = read(facts, value, depth + 1)
        if found is not None:
            return found
    function, before = facts.function_of(at), facts.order(at)
    runs = [
        c
        for c in facts.nodes.calls
        if callee_name(c) in ("execute", "executemany")
        and isinstance(c.func, cst.Attribute)
        and facts.code(c.func.value) == source.value
        and facts.function_of(c) is function
        and facts.order(c) < before
    ]
    return read(facts, max(runs, key=facts.order), depth + 1) if runs else None
