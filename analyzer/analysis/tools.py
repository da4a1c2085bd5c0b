"""What the tools given to a model or agent call hold: `ToolFacts.attached(module, limit)`.

Tools are attached by a `tools=` or `functions=` argument (or the tools position of
`bind_tools`, `create_react_agent`...), a framework's own keyword beside it (the Agents SDK's
`mcp_servers=`), a dict of arguments spread into the call (`api_args["tools"] = TOOLS`,
`create(**api_args)`) or a Pydantic AI agent's `@agent.tool` functions. What such an argument
holds is read from what the code builds, never from a name: its elements and their count,
through names bound once, `+`, `*` unpacking, `list(d.values())`, comprehensions without a
filter, what a helper of the module returns, a list or helper of another module as the
project pass linked it (`chatbound.analysis.toollists`), and every tool of an MCP server, as
`chatbound.frameworks` knows its calls and toolsets (a well-known server counted in its
source, a server script the module holds, a client of the project's own that gathers every
server's tools: `chatbound.analysis.servertools`). Routes to other agents are counted apart
from the work tools, and a written list that is one job's toolkit or part of a split is told
apart from every tool the app has. Where the schemas can be read, their tokens are counted.

The tools rule feeds `ToolFacts` the nodes of its one traversal (`collect_*`) and asks it in
`leave_Module`, while the metadata is live.
"""

from __future__ import annotations

import ast
import functools
import json
import os
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ParentNodeProvider, ScopeProvider

from chatbound import frameworks
from chatbound.analysis import launches, servertools, toollists
from chatbound.analysis.histories import walk
from chatbound.analysis.project.imports import imports_of
from chatbound.analysis.toollists import ROUTE_CALLS
from chatbound.compaction.tokens import DEFAULT_ENCODING, get_encoder
from chatbound.frameworks import Server
from chatbound.syntax.datafiles import read_data_file
from chatbound.syntax.messages import ast_callee_name, ast_class_name, callee_name, class_name, role_of, string
from chatbound.syntax.stdlib_tree import PythonTree
from chatbound.syntax.texts import text_of
from chatbound.syntax.values import bound_expression, grown_from
from chatbound.vocabulary.sinks import dotted, keyword, positional
from chatbound.vocabulary.summaries import RemoteToolList

TOOL_KEYWORDS = ("tools", "functions")
# callee -> index of the tools argument when passed positionally (None: keyword only)
TOOL_TAKERS = {
    "bind_tools": 0,
    "bind_functions": 0,
    "create_react_agent": 1,
    "create_agent": 1,
    "create_tool_calling_agent": 1,
    "create_openai_tools_agent": 1,
    "create_openai_functions_agent": 1,
    "create_structured_chat_agent": 1,
    "initialize_agent": 0,
    "from_tools": 0,
    "completion": None,
    "acompletion": None,  # litellm
    "generate_content": None,
    "generate_content_async": None,
    "GenerateContentConfig": None,
    "GenerativeModel": None,
    "Crew": None,
}
MODEL_CALLS = ("create", "acreate", "parse", "stream")  # with messages=/input=/model=
TOOL_DECORATORS = ("tool", "function_tool")
AGENT_RUNS = ("run", "run_sync", "run_stream", "invoke", "ainvoke")  # an agent run on a tool's brief
AGENT_TOOL_DECORATORS = ("tool", "tool_plain")  # Pydantic AI: @agent.tool (pydantic-ai-slim 2.68.0 agent/__init__.py)
WRITTEN = "the list, which names each tool"  # a hand-picked set: the only kind a toolkit or a split excuses
JOINED = "tool lists joined together"
# what the frameworks add: their own keywords for tools (the Agents SDK's mcp_servers=), for the
# rule's pre-check, and the bound for every tool of a server (chatbound.frameworks)
FRAMEWORK_TOOL_TRIGGERS = frameworks.TOOL_TRIGGERS
SERVER_TOOLS_ADVICE = frameworks.SERVER_TOOLS_ADVICE
PY_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "list": "array", "dict": "object"}


def takes_tools(name: str, keywords) -> bool:
    """Whether a call of `name` with these keyword names may be given the tools of a model."""
    return (
        name in TOOL_TAKERS
        or name.endswith("Agent")
        or (name in MODEL_CALLS and any(k in keywords for k in ("messages", "input", "model")))
    )


def _may_bind_tools(node: ast.AST, aliases: dict[str, str]) -> bool:
    """A call `_tools_arguments` reads a tools argument of, or a function registered as an
    agent's tool (`@agent.tool`), on CPython's tree; `aliases` names the methods bound to a
    name (`create = client.chat.completions.create`)."""
    if type(node) is ast.Call:
        name, keywords = ast_class_name(node), {k.arg for k in node.keywords}
        name = aliases.get(name, name) if isinstance(node.func, ast.Name) else name
        if not takes_tools(name, keywords):
            return False
        index = TOOL_TAKERS.get(name)
        positional = [a for a in node.args if not isinstance(a, ast.Starred)]
        return not keywords.isdisjoint((*TOOL_KEYWORDS, *frameworks.TOOL_KEYWORDS)) or (
            index is not None and len(positional) > index
        )
    if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if (
                isinstance(target, ast.Attribute)
                and target.attr in AGENT_TOOL_DECORATORS
                and isinstance(target.value, ast.Name)
            ):
                return True
    return False


def _method_aliases(tree: PythonTree) -> dict[str, str]:
    """`create = client.chat.completions.create`: the name -> the method's name."""
    return {
        target.id: node.value.attr
        for node in tree.nodes(ast.Assign)
        if isinstance(node.value, ast.Attribute)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def may_attach_tools(tree: PythonTree) -> bool:
    """Whether a module may attach tools to a model or agent, on CPython's tree: a call given
    a tools argument, an agent's `@agent.tool`, a call listing a server's tools, or a call
    given a dict of arguments that holds tools."""
    aliases = _method_aliases(tree)
    return (
        any(_may_bind_tools(node, aliases) for node in tree.nodes(ast.Call, ast.FunctionDef, ast.AsyncFunctionDef))
        or any(ast_callee_name(call) in frameworks.SERVER_TOOL_CALLS for call in tree.nodes(ast.Call))
        or _may_spread_tools(tree)
        or _may_pass_tools_on(tree)
    )


def _may_pass_tools_on(tree: PythonTree) -> bool:
    """`llm.send(..., tools=TOOLS)`: `tools=` given to an imported function, which may hand the
    list to its model call (the project pass says whether it does)."""
    imported = {
        (alias.asname or alias.name).split(".")[0]
        for node in tree.nodes(ast.Import, ast.ImportFrom)
        for alias in node.names
    }
    return any(
        _root_name(call.func) in imported and any(k.arg == "tools" for k in call.keywords)
        for call in tree.nodes(ast.Call)
    )


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _may_spread_tools(tree: PythonTree) -> bool:
    """A call that may take tools given a dict of its arguments (`create(**api_args)`), in a
    module that puts tools into a dict (`api_args["tools"] = ...`, `{"tools": ...}`)."""
    spreads = any(
        None in {k.arg for k in call.keywords} and takes_tools(ast_callee_name(call), ("model",))
        for call in tree.nodes(ast.Call)
    )
    keys = [d.slice for d in tree.nodes(ast.Subscript)] + [k for d in tree.nodes(ast.Dict) for k in d.keys]
    return spreads and any(isinstance(k, ast.Constant) and k.value in TOOL_KEYWORDS for k in keys)


@dataclass
class Tools:
    """What a tools expression holds: its element expressions, or None when unknown."""

    elements: list[cst.BaseExpression] | None
    definition: cst.CSTNode | None = None  # the named list, when it is not written inline
    partial: bool = False  # some elements (a starred unknown) are not counted
    imported: tuple[RemoteToolList, ...] = ()  # lists of other modules it holds (counted there)
    servers: tuple[str, ...] = ()  # every tool of a server, known only at run time (how each reads)
    served: tuple[Server, ...] = ()  # every tool of a well-known server, counted in its source
    how: str = WRITTEN  # how the set was gathered, said in the message
    picked: bool = True  # hand-picked (a written list, an agent's own decorated tools), not gathered

    def __add__(self, other: Tools) -> Tools:
        return Tools(
            (self.elements or []) + (other.elements or []),
            partial=self.partial or other.partial,
            imported=self.imported + other.imported,
            servers=self.servers + other.servers,
            served=self.served + other.served,
            how=JOINED,
            picked=False,
        )


class ToolFacts:
    """What the tools attached in one module hold, asked of the tools rule (`rule` reads the
    metadata and the module's chat facts; `nodes` are the chat nodes it collects)."""

    def __init__(self, rule) -> None:
        self.rule = rule
        self.context = rule.context
        self.nodes = rule.nodes
        # (call, where tools are given to it: an argument or a dict entry, the tools), resolved at the end
        self.arguments: list[tuple[cst.Call, cst.CSTNode, cst.BaseExpression]] = []
        self.spread: list[cst.Call] = []  # calls given a dict of arguments (`create(**api_args)`)
        self.calls: list[cst.Call] = []  # calls that may hand tools to another module's function, resolved at the end
        self.attaching: cst.Call | None = None  # the call whose tools are being resolved
        self.functions: dict[str, cst.FunctionDef] = {}
        self.imported: dict[str, tuple[str, str]] = {}  # local name -> (sibling file, its name there)
        self.sibling_functions: dict[str, dict[str, cst.FunctionDef]] = {}
        self.agent_tools: dict[str, list[cst.FunctionDef]] = {}
        self.agent_names: dict[str, cst.Name] = {}
        self.bindings: dict[str, str] | None = None  # imported name -> target, read when a list is imported
        self.imports: set[str] = set()  # modules the file imports from (which frameworks it uses)
        self.resources: set[str] | None = None  # module-level objects tools may share, read when needed

    # --- where tools are attached ----------------------------------------------------

    def collect_import(self, node: cst.Import) -> None:
        self.imports.update(self.context.module.code_for_node(alias.name) for alias in node.names)

    def collect_import_from(self, node: cst.ImportFrom) -> None:
        """`from .tools import lookup` / `from tools import lookup`: a file next to this one."""
        if node.module is not None and not node.relative:
            self.imports.add(self.context.module.code_for_node(node.module))
        if node.module is None or isinstance(node.names, cst.ImportStar) or len(node.relative) > 1:
            return
        if not node.relative and not isinstance(node.module, cst.Name):
            return  # an absolute dotted module: where it lives is not known here
        path = self.context.module.code_for_node(node.module).replace(".", "/") + ".py"
        for alias in node.names:
            if isinstance(alias.name, cst.Name):
                local = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(local, cst.Name):
                    self.imported[local.value] = (path, alias.name.value)

    def collect_function(self, node: cst.FunctionDef) -> None:
        self.functions.setdefault(node.name.value, node)
        for decorator in node.decorators:
            target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            if (
                isinstance(target, cst.Attribute)
                and target.attr.value in AGENT_TOOL_DECORATORS
                and isinstance(target.value, cst.Name)
                and not _chosen(decorator.decorator)
            ):
                self.agent_tools.setdefault(target.value.value, []).append(node)
                self.agent_names.setdefault(target.value.value, target.value)

    def collect_call(self, node: cst.Call) -> None:
        arguments = self._tools_arguments(node)
        self.arguments.extend((node, argument, argument.value) for argument in arguments)
        if not arguments and node.args and self.context.project is not None and self.context.project.functions:
            self.calls.append(node)
        if takes_tools(self._callee(node), ("model",)) and any(
            a.star == "**" and isinstance(a.value, cst.Name) for a in node.args
        ):
            self.spread.append(node)

    def _spread_tools(self, call: cst.Call) -> list[tuple[cst.Call, cst.CSTNode, cst.BaseExpression]]:
        """The tools a call is given through a dict of its arguments (`api_args = {"model": m,
        "messages": h}`, `api_args["tools"] = tools`, `create(**api_args)`): where each is put in."""
        entries: dict[str, tuple[cst.CSTNode, cst.BaseExpression]] = {}
        for spread in (a.value for a in call.args if a.star == "**" and isinstance(a.value, cst.Name)):
            written = bound_expression(self.rule, spread)
            for element in written.elements if isinstance(written, cst.Dict) else ():
                if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                    entries[element.key.evaluated_value] = (element, element.value)
            scope = self.rule.get_metadata(ScopeProvider, spread, None)
            for node, target in self._stores.get(spread.value, ()):
                key = getattr(target.slice[0].slice, "value", None) if len(target.slice) == 1 else None
                if (
                    isinstance(key, cst.SimpleString)
                    and self.rule.get_metadata(ScopeProvider, target.value, None) is scope
                ):
                    entries[key.evaluated_value] = (node, node.value)
        keywords = {a.keyword.value for a in call.args if a.keyword is not None} | entries.keys()
        if not takes_tools(class_name(call), keywords):
            return []
        return [(call, *entries[k]) for k in (*TOOL_KEYWORDS, *frameworks.TOOL_KEYWORDS) if k in entries]

    @functools.cached_property
    def _stores(self) -> dict[str, list[tuple[cst.Assign, cst.Subscript]]]:
        """`name[key] = value` assignments, by the name."""
        found: dict[str, list[tuple[cst.Assign, cst.Subscript]]] = {}
        for node in self.nodes.assigns:
            target = node.targets[0].target if isinstance(node, cst.Assign) and len(node.targets) == 1 else None
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                found.setdefault(target.value.value, []).append((node, target))
        return found

    def _callee(self, call: cst.Call) -> str:
        """`class_name`, through a name bound to a method (`create = client.chat.completions.create`)."""
        bound = bound_expression(self.rule, call.func) if isinstance(call.func, cst.Name) else None
        return bound.attr.value if isinstance(bound, cst.Attribute) else class_name(call)

    def _tools_arguments(self, call: cst.Call) -> list[cst.Arg]:
        """`tools=` (or `functions=`, or the tools position), and a framework's own keyword for
        tools beside it (`mcp_servers=`)."""
        name = self._callee(call)
        keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
        if not takes_tools(name, keywords):
            return []
        own = [keywords[k] for k in frameworks.TOOL_KEYWORDS if k in keywords]
        for tool_keyword in TOOL_KEYWORDS:
            if tool_keyword in keywords:
                return [keywords[tool_keyword], *own]
        index = TOOL_TAKERS.get(name)
        positional = [a for a in call.args if a.keyword is None and not a.star]
        return [positional[index], *own] if index is not None and len(positional) > index else own

    # --- what a tools expression holds ------------------------------------------------

    def _tools(self, node: cst.BaseExpression, depth: int = 0) -> Tools | None:
        if depth > 8:
            return None
        depth += 1
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            elements: list[cst.BaseExpression] = []
            imported: tuple[RemoteToolList, ...] = ()
            partial, servers, served, how, picked = False, (), (), WRITTEN, True
            for element in node.elements:
                if isinstance(element, cst.StarredElement):
                    inner = self._tools(element.value, depth)
                    if inner is None or inner.elements is None:
                        partial = True
                        continue
                    elements.extend(inner.elements)
                    imported += inner.imported
                    partial, servers, how = partial or inner.partial, servers + inner.servers, JOINED
                    served += inner.served
                    picked = False
                elif (toolset := self._toolset(element.value)) is not None:
                    server, launched = toolset
                    if (here := self._served_here(launched)) is not None:  # `MCPServerStdio("python", ["-c", SERVER])`
                        elements.extend(here.elements)
                        picked, how = False, here.how
                        continue
                    known = frameworks.known_server(self._words(launched))
                    served, servers = (served + (known,), servers) if known else (served, servers + (server,))
                else:
                    elements.append(element.value)
            return Tools(
                elements, partial=partial, imported=imported, servers=servers, served=served, how=how, picked=picked
            )
        if isinstance(node, cst.Await):
            return self._tools(node.expression, depth)
        if isinstance(node, cst.Attribute) and node.attr.value == "tools":  # `(await session.list_tools()).tools`
            inner = self._tools(node.value, depth)
            if inner is not None and inner.servers:
                return inner
        if isinstance(node, cst.Attribute):
            return self._imported(node, returned=False) or self._listed_servers(node)
        if isinstance(node, cst.IfExp) or isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
            # `tools if tools else None`, `tools or None`: what is attached when there are any
            branches = (node.body, node.orelse) if isinstance(node, cst.IfExp) else (node.left, node.right)
            attached = [branch for branch in branches if not servertools.empty(branch)]
            return self._tools(attached[0], depth) if len(attached) == 1 else None
        if isinstance(node, cst.Name):
            bound = bound_expression(self.rule, node) or grown_from(self.rule, node)
            if isinstance(bound, cst.List) and not bound.elements and (gathered := self._gathered(node)) is not None:
                return gathered
            if bound is None:
                held = self._held(node)  # `with MCPClient(...) as tools`, `tools, stack = await ...from_server(...)`
                if isinstance(held, cst.Await):
                    held = held.expression
                server = frameworks.server_tools(self.imports, held) if isinstance(held, cst.Call) else None
                if server is not None:
                    served = self._served_here(held)
                    return served or self._every_tool(held, server)
                return self._imported(node, returned=False) or self._listed_servers(node)
            inner = self._tools(bound, depth)
            if inner is not None and inner.definition is None:
                inner.definition = bound
            if inner is None or inner.elements is None:
                return None
            return inner
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            left, right = self._tools(node.left, depth), self._tools(node.right, depth)
            if left is None or right is None or left.elements is None or right.elements is None:
                return None
            return left + right
        if isinstance(node, cst.Dict):
            values = [e.value for e in node.elements if isinstance(e, cst.DictElement)]
            return Tools(
                values, partial=len(values) < len(node.elements), how="every value of a dict of tools", picked=False
            )
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            loop = node.for_in
            if loop.ifs or loop.inner_for_in is not None:
                return self._listed_servers(
                    node
                )  # a filter or a product: chosen, not all (or only named tools left out)
            inner = self._tools(loop.iter, depth)
            if inner is None or inner.elements is None:
                return None
            return Tools(
                inner.elements,
                partial=inner.partial,
                imported=inner.imported,
                servers=inner.servers,
                served=inner.served,
                how=inner.how,
                picked=inner.picked,
            )
        if isinstance(node, cst.Call):
            server = frameworks.server_tools(self.imports, node)
            if server is not None:
                return self._every_tool(node, server)
            name = callee_name(node)
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            if name in ("list", "tuple", "set", "sorted") and len(positional) == 1:
                return self._tools(positional[0], depth)
            if name == "values" and isinstance(node.func, cst.Attribute) and not node.args:
                inner = self._tools(node.func.value, depth)
                if inner is not None:
                    inner.how, inner.picked = f"every value of `{self._code(node.func.value)}`", False
                return inner
            served = self._listed_servers(node)  # a helper of the module's own client: `flatten(by_server_lists)`
            if served is not None:
                return served
            returned = self._returned(node)
            if returned is not None:  # `all_tools()`: what the module's helper returns
                inner = self._tools(returned, depth)
                if inner is not None and inner.definition is None:
                    inner.definition = returned
                if inner is not None:
                    inner.how, inner.picked = f"everything `{self._code(node.func)}()` returns", False
                return inner
            return self._imported(node.func, returned=True) or self._listed_servers(node)  # a helper of another module
        return None

    def _listed_servers(self, node: cst.BaseExpression) -> Tools | None:
        """Every tool of MCP servers the module's own client code lists and hands on (a method
        returning them, an attribute gathering them, a parameter given them): `chatbound.analysis.servertools`."""
        if not self.lists_servers:
            return None
        found = self.server_tools.tools(node, self.rule.chat_facts().function_of(self.attaching))
        if found is None:
            return None
        if found.into is None:
            return self._every_tool(found.call, self.server_tools.describe(found))
        return Tools([], servers=(self.server_tools.describe(found),), how=JOINED, picked=False)

    def _every_tool(self, listing: cst.Call, described: str) -> Tools:
        """Every tool of the servers a listing call lists: counted when each is a well-known server
        launched in the module (`chatbound.analysis.launches`), known only when it runs otherwise."""
        launched = launches.launches(self.rule, listing) or []
        known = [frameworks.known_server(self._words(launch)) for launch in launched]
        if known and all(known):
            return Tools([], served=tuple(server for server in known if server is not None), how=JOINED, picked=False)
        return Tools([], servers=(described,), how=JOINED, picked=False)

    @functools.cached_property
    def server_tools(self) -> servertools.ServerTools:
        return servertools.ServerTools(self.rule.chat_facts())

    @functools.cached_property
    def lists_servers(self) -> bool:
        """Whether the module lists a server's tools (asked once the traversal is over)."""
        return any(frameworks.server_tools(self.imports, c) for c in self.nodes.calls)

    def _imported(self, node: cst.BaseExpression, returned: bool) -> Tools | None:
        """The tool list of another module that `node` names (`ALL_TOOLS`, `registry.TOOLS`), or
        the helper it calls (`all_tools()` of `tools/helpers.py`), as the project pass linked it."""
        project = self.context.project
        parts = dotted(node)
        if project is None or not project.tool_lists or not parts:
            return None
        if self.bindings is None:
            self.bindings = dict(imports_of(self.context.module.code.encode("utf-8")))
        base = self.bindings.get(parts[0])
        if base is None and returned and len(parts) == 2:  # `client.start()` of `client = mcp_client.MCPClient()`
            built = (
                bound_expression(self.rule, node.value)
                if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                else None
            )
            klass = dotted(built.func) if isinstance(built, cst.Call) else None
            base = ".".join((self.bindings[klass[0]], *klass[1:])) if klass and klass[0] in self.bindings else None
        remote = project.tool_lists.get(".".join((base, *parts[1:]))) if base is not None else None
        if remote is None or remote.summary.returned is not returned:
            return None
        what = f"everything `{'.'.join(parts)}()` returns" if returned else f"`{'.'.join(parts)}`"
        return Tools(
            [],
            partial=remote.summary.partial,
            imported=(remote,),
            servers=remote.summary.servers,
            how=f"{what}, built in `{remote.place.path}`",
            picked=False,
        )

    # --- the sets attached, one per tool list ------------------------------------------

    def attached(self, module: cst.Module, limit: int) -> list[tuple[cst.CSTNode, Tools, int, cst.Call, int]]:
        """The tool sets attached to a model or agent call with `limit` or more work tools, or
        every tool of a server, one per list: (where to report, the tools, how many work tools,
        the call, how many routes to other agents). A written set chosen for one job (a
        toolkit, a split between agents) is left out."""
        attached = []  # (where to report, tools, work tools, call, routes, the list's identity)
        given = [*self.arguments, *(e for c in self.spread for e in self._spread_tools(c)), *self._passed_on()]
        for call, argument, value in given:
            if frameworks.chooses_tools(call):
                continue  # the agent chooses its tools for each step
            self.attaching = call
            tools = self._tools(value)
            if tools is None or tools.elements is None:
                continue  # a size the module does not show is never guessed from a name
            routes = len([e for e in tools.elements if self.is_route(e)]) + sum(
                r.summary.routes for r in tools.imported
            )
            count = (
                len(tools.elements)
                - routes
                + sum(r.summary.work + r.summary.routes for r in tools.imported)
                + sum(server.tools for server in tools.served)
            )
            key = id(tools.definition) if tools.definition is not None else id(argument)
            attached.append((argument, tools, count, call, routes, key))
        for agent, functions in self.agent_tools.items():
            bound = bound_expression(self.rule, self.agent_names[agent])
            if (
                isinstance(bound, cst.Call)
                and class_name(bound).endswith("Agent")
                and not frameworks.chooses_tools(bound)
            ):
                routes = sum(self._delegates(f) for f in functions)
                tools = Tools(list(f.name for f in functions), how=f"every `@{agent}.tool` function")
                attached.append((bound, tools, len(functions) - routes, bound, routes, id(bound)))
        # different sets of two or more tools for different calls: the tools are already split
        split = len({self._signature(tools) for _, tools, count, *_ in attached if count > 1}) > 1
        reported: set[int] = set()
        found = []
        for node, tools, count, call, routes, key in attached:
            if key in reported or (count < limit and not tools.servers):
                continue
            if tools.picked and not tools.servers and not tools.served and (split or self._toolkit(tools, module)):
                continue  # a set chosen for one job, not every tool the app has
            reported.add(key)
            found.append((node, tools, count, call, routes))
        return found

    def _passed_on(self) -> list[tuple[cst.Call, cst.CSTNode, cst.BaseExpression]]:
        """Tools handed to a function of another module that gives them to its model call
        (`llm.send(client, messages, tools=TOOLS)`, as the project pass linked it)."""
        if not self.calls:
            return []
        facts = self.rule.chat_facts()
        found = []
        for call in self.calls:
            remote = facts.imported_function(call)
            for param in remote.tool_params if remote is not None else ():
                value = (
                    next(
                        (a.value for a in call.args if a.keyword is not None and a.keyword.value in TOOL_KEYWORDS), None
                    )
                    if param.startswith("**")
                    else facts.argument_in(call, remote.params, param)
                )
                argument = next((a for a in call.args if a.value is value), None)
                if argument is not None:
                    found.append((call, argument, value))
        return found

    # --- every tool of MCP servers described in a system prompt ---------------------------

    def described_servers(self) -> list[tuple[cst.Call, Tools, cst.Call]]:
        """Where every tool of MCP servers is written into a system prompt a model is sent
        (`"\\n".join(t.format_for_llm() for t in all_tools)` in the system message): (the
        `join` that writes them, those tools, the model call), one per `join`."""
        facts = self.rule.chat_facts()
        prompts = [
            (content, flow.site)
            for flow in facts.flows()
            for definition in flow.history.definitions
            if isinstance(definition, cst.CSTNode)
            for content in _system_contents(definition)
        ]
        for site, sink in facts.sites():
            for arg in sink.content:
                value = bound_expression(self.rule, arg) if isinstance(arg, cst.Name) else arg
                prompts += [(content, site) for content in _system_contents(value)] if value is not None else []
            system = keyword(site, "system")
            prompts += [(system.value, site)] if system is not None else []
        reported: set[int] = set()
        described = []
        for content, site in prompts:
            self.attaching = site
            found = self._description(content)
            if found is None or id(found[0]) in reported:
                continue
            reported.add(id(found[0]))
            described.append((*found, site))
        return described

    def _description(self, expr: cst.BaseExpression, depth: int = 0) -> tuple[cst.Call, Tools] | None:
        """The `join` that writes every tool of MCP servers into `expr` (through names, f-strings,
        `+` and `.format(...)`), with those tools; None when `expr` holds no such text."""
        if depth > 6:
            return None
        parts: list[cst.BaseExpression] = []
        if isinstance(expr, cst.Name):
            bound = bound_expression(self.rule, expr) or grown_from(self.rule, expr)
            parts = [bound] if bound is not None else []
        elif isinstance(expr, cst.FormattedString):
            parts = [p.expression for p in expr.parts if isinstance(p, cst.FormattedStringExpression)]
        elif isinstance(expr, (cst.BinaryOperation, cst.ConcatenatedString)):
            parts = [expr.left, expr.right]
        elif isinstance(expr, cst.Call) and callee_name(expr) == "join" and expr.args:
            joined = expr.args[0].value
            listed = (
                joined.for_in.iter
                if isinstance(joined, (cst.ListComp, cst.GeneratorExp)) and not joined.for_in.ifs
                else joined
            )
            tools = self._tools(listed) if isinstance(listed, (cst.Name, cst.Attribute, cst.Await, cst.Call)) else None
            return (expr, tools) if tools is not None and tools.servers else None
        elif isinstance(expr, cst.Call) and callee_name(expr) == "format" and isinstance(expr.func, cst.Attribute):
            parts = [expr.func.value, *(a.value for a in expr.args)]
        for part in parts:
            found = self._description(part, depth + 1)
            if found is not None:
                return found
        return None

    def _signature(self, tools: Tools) -> frozenset[str]:
        """What a set holds, to tell two sets apart (the same list attached twice is one)."""
        return frozenset(self._code(e) for e in tools.elements or []) | frozenset(
            f"{r.place.path}:{r.place.span.line}" for r in tools.imported
        )

    def _toolkit(self, tools: Tools, module: cst.Module) -> str | None:
        """The one object most of the tools act on (a browser, a database pool, the run's state):
        a toolkit for one job; None when the tools share none."""
        if self.resources is None:
            self.resources = toollists.resources(module)
        work = [e for e in tools.elements or [] if not self.is_route(e)]
        return toollists.shared_object([self._objects(e) for e in work])

    def _objects(self, element: cst.BaseExpression, depth: int = 0) -> set[str]:
        """The objects a tool acts on: what its function works on, or the objects its
        constructor is given (`VisitTool(browser)`)."""
        if isinstance(element, cst.Name) and depth < 2:
            function = self.functions.get(element.value)
            if function is not None:
                found = toollists.acts_on(function, frameworks.TOOL_CONTEXT)
                return {o for o in found if o in self.resources or "." in o}
            bound = bound_expression(self.rule, element)
            return self._objects(bound, depth + 1) if isinstance(bound, cst.Call) else set()
        if isinstance(element, cst.Call):
            found = set()
            for argument in (
                a.value
                for a in element.args
                if isinstance(a.value, cst.Name) and a.value.value not in ("None", "True", "False")
            ):
                function = self.functions.get(argument.value)
                found |= self._objects(argument, depth + 1) if function is not None else {argument.value}
            return found
        return set()

    def _served_here(self, server: cst.Call) -> Tools | None:
        """The tools of an MCP server whose source this module holds: a script its parameters
        run with `python -c SCRIPT` (a text, or what a function of the module returns), counted
        by the functions it registers (`@mcp.tool`). None when the server's source is elsewhere."""
        if (defined := self._server_object(server)) is not None:
            return defined
        items = self._launch_args(server)
        flag = next(
            (i for i, item in enumerate(items) if isinstance(item, cst.SimpleString) and item.evaluated_value == "-c"),
            None,
        )
        if flag is None or flag + 1 >= len(items):
            return None
        script = items[flag + 1]
        if isinstance(script, cst.Call):
            script = self._returned(script) or script
        text = text_of(self.rule, script)
        tools = toollists.registered_tools(text.value) if text is not None and not text.partial else None
        if tools is None:
            return None
        return Tools([cst.Name(name) for name in tools], how="every tool of the server script it runs", picked=False)

    def _server_object(self, server: cst.Call) -> Tools | None:
        """The tools of a server object the module defines and hands to the toolset in-process
        (`mcp = FastMCP(...)`; `MCPToolset(mcp)`): the functions it registers (`@mcp.tool`)."""
        given = positional(server, 0) or keyword(server, "client")
        name = given.value if given is not None else None
        bound = bound_expression(self.rule, name) if isinstance(name, cst.Name) else None
        packages = frameworks.SERVER_OBJECTS.get(callee_name(bound)) if isinstance(bound, cst.Call) else None
        if (
            name is None
            or packages is None
            or not any(i == p or i.startswith(p + ".") for i in self.imports for p in packages)
        ):
            return None
        registered = [
            cst.Name(function.name.value)
            for function in self.functions.values()
            if any(_registers(d.decorator, name.value) for d in function.decorators)
        ]
        return Tools(
            registered, how=f"every tool `{name.value}` registers, the server the module defines", picked=False
        )

    def _launch_args(self, server: cst.Call) -> list[cst.BaseExpression]:
        """The arguments a server's launch passes its command: `args=` of the parameters given
        first (`MCPClient(StdioServerParameters(command, args=[...]))`, mcp 2.3.0), the `"args"`
        of a parameters dict (Agents SDK 0.24.0 `MCPServerStdio(params={"command": ..., "args": [...]})`,
        `MCPServerStdioParams`), or the server's own (Pydantic AI 1.0.0 `MCPServerStdio(command, args)`)."""
        own = keyword(server, "args") or positional(server, 1)
        params = keyword(server, "params") or positional(server, 0)
        args = own.value if own is not None else params.value if params is not None else None
        if isinstance(args, cst.Name):
            args = bound_expression(self.rule, args)
        if isinstance(args, cst.Call):
            args = next((a.value for a in args.args if a.keyword and a.keyword.value == "args"), None)
        elif isinstance(args, cst.Dict):
            args = next(
                (e.value for e in args.elements if isinstance(e, cst.DictElement) and string(e.key) == "args"), None
            )
        return [e.value for e in args.elements] if isinstance(args, (cst.List, cst.Tuple)) else []

    def _toolset(self, element: cst.BaseExpression) -> tuple[str, cst.Call] | None:
        """How an element that stands for every tool of a server (an MCP toolset) reads, and the
        call that makes the toolset; None when it is no such element."""
        bound = element
        if isinstance(element, cst.Name):
            bound = bound_expression(self.rule, element) or self._held(element)  # `async with MCPServerStdio(...) as s`
        server = frameworks.toolset(self.imports, bound) if isinstance(bound, cst.Call) else None
        return (server, bound) if server is not None else None

    def _words(self, node: cst.CSTNode, depth: int = 0) -> list[str]:
        """The texts written in a toolset's launch parameters (`'npx', ['-y', PACKAGE]`), through
        names bound once (`params = StdioServerParameters(...)`)."""
        words = []
        for child in walk(node):
            if isinstance(child, cst.SimpleString):
                words.append(child.evaluated_value)
            elif (
                isinstance(child, cst.Name) and depth < 3 and (bound := bound_expression(self.rule, child)) is not None
            ):
                words += self._words(bound, depth + 1)
        return [w for w in words if isinstance(w, str)]

    def _gathered(self, name: cst.Name) -> Tools | None:
        """What a list started empty and grown with every tool of MCP servers holds (`tools.extend((await
        s.list_tools()).tools)` for each session): every tool of each, and what else it is grown with;
        None when nothing it is grown with lists a server's tools, or a part of it is chosen (a
        filtered comprehension)."""
        if not self.lists_servers:
            return None
        scope = self.rule.get_metadata(ScopeProvider, name, None)
        listed, elements, partial = None, [], False
        for site, value in self.nodes.growth_by_name.get(name.value, ()):
            receiver = site.func.value if isinstance(site, cst.Call) else site.target
            if value is None or self.rule.get_metadata(ScopeProvider, receiver, None) is not scope:
                continue
            found = self.server_tools.tools(value, self.rule.chat_facts().function_of(self.attaching))
            if found is not None:
                listed = listed or found
            elif servertools.chosen(value):
                return None
            elif isinstance(site, cst.Call) and callee_name(site) == "append":
                elements.append(value)
            else:
                partial = True
        if listed is None:
            return None
        gathered = self.server_tools.describe(servertools.Listed(listed.call, name.value))
        return Tools(elements, partial=partial, servers=(gathered,), how=JOINED, picked=False)

    def _held(self, name: cst.Name) -> cst.BaseExpression | None:
        """What a name bound once by `with X as name`, or as the first of `name, rest = X`, holds: X."""
        scope = self.rule.get_metadata(ScopeProvider, name, None)
        assignments = list(scope[name.value]) if scope is not None else []
        target = getattr(assignments[0], "node", None) if len(assignments) == 1 else None
        parent = self.rule.get_metadata(ParentNodeProvider, target, None) if isinstance(target, cst.Name) else None
        if isinstance(parent, cst.AsName):
            item = self.rule.get_metadata(ParentNodeProvider, parent, None)
            return item.item if isinstance(item, cst.WithItem) else None
        if isinstance(parent, cst.Element):
            unpacked = self.rule.get_metadata(ParentNodeProvider, parent, None)
            assign = self.rule.get_metadata(
                ParentNodeProvider, self.rule.get_metadata(ParentNodeProvider, unpacked, None), None
            )
            if (
                isinstance(unpacked, (cst.Tuple, cst.List))
                and unpacked.elements[0] is parent
                and isinstance(assign, cst.Assign)
            ):
                return assign.value
        return None

    def _code(self, node: cst.CSTNode) -> str:
        return self.context.module.code_for_node(node)

    def _returned(self, call: cst.Call) -> cst.BaseExpression | None:
        """The one value a function of this module returns, for `call` of it."""
        function = self.functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
        if function is None:
            return None
        returns = [n.value for n in walk(function.body) if isinstance(n, cst.Return) and n.value is not None]
        return returns[0] if len(returns) == 1 else None

    def is_route(self, element: cst.BaseExpression) -> bool:
        """A handoff to another agent, not a work tool: an SDK `handoff(...)` /
        `create_handoff_tool(...)`, an agent run as a tool (`AgentTool(agent=...)`,
        `agent.as_tool(...)`), or a function of the module that returns an agent
        (`def transfer_to_sales(): return sales_agent`, the Swarm pattern) or runs one, or a class
        whose name a router of the module compares with the tool call's to pick a specialist
        (`ToBilling`)."""
        if isinstance(element, cst.Call):
            return callee_name(element) in ROUTE_CALLS
        function = self.functions.get(element.value) if isinstance(element, cst.Name) else None
        if function is None:
            return isinstance(element, cst.Name) and element.value in self._route_schemas
        returns = [n.value for n in walk(function.body) if isinstance(n, cst.Return) and n.value is not None]
        return (bool(returns) and all(self._is_agent(r) for r in returns)) or self._delegates(function)

    @functools.cached_property
    def _route_schemas(self) -> set[str]:
        """The classes given as tools only for a router to pick a specialist by (`chatbound.frameworks`)."""
        code = self.context.module.code
        if "__name__" not in code or "tool_calls" not in code:
            return set()  # no router compares a tool call's name with a class's
        try:
            return frameworks.route_schemas(ast.parse(code))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return set()  # grammar LibCST reads and this interpreter does not

    def _delegates(self, function: cst.FunctionDef) -> bool:
        """A tool that runs another agent of the module on its brief (`await billing_agent.run(query)`):
        a route to a specialist, not a work tool."""
        return any(
            isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and n.func.attr.value in AGENT_RUNS
            and isinstance(n.func.value, cst.Name)
            and self._is_agent(n.func.value)
            for n in walk(function.body)
        )

    def _is_agent(self, value: cst.BaseExpression) -> bool:
        bound = bound_expression(self.rule, value) if isinstance(value, cst.Name) else value
        return isinstance(bound, cst.Call) and class_name(bound).endswith("Agent")

    # --- schema tokens, where the schemas can be read --------------------------------

    def schema_tokens(self, elements: list[cst.BaseExpression]) -> tuple[int, int, str] | None:
        """The tokens of the tools' schemas that can be read (dict literals, functions of the
        file or of a sibling module it imports): (tokens, how many schemas, the encoding), or
        None when none can be read."""
        schemas = [s for s in (self._schema(e) for e in elements) if s is not None]
        if not schemas:
            return None
        encoder = get_encoder(self.context.options.get("encoding", DEFAULT_ENCODING))
        total = sum(encoder(json.dumps(s)) for s in schemas)
        encoding = encoder.encoding.removesuffix("_offline")
        return total, len(schemas), encoding

    def _function(self, name: str) -> cst.FunctionDef | None:
        """A function of this file, or of a sibling file it is imported from (read, not run)."""
        if name in self.functions:
            return self.functions[name]
        if name not in self.imported or not self.context.directory:
            return None
        path, original = self.imported[name]
        if path not in self.sibling_functions:
            self.sibling_functions[path] = {}
            text = read_data_file(self.context.directory, path)
            if text is not None:
                self.context.data_files.append(os.path.normpath(os.path.join(self.context.directory, path)))
                try:
                    module = cst.parse_module(text)
                except Exception:  # a sibling that does not parse only loses its schema tokens
                    module = None
                if module is not None:
                    self.sibling_functions[path] = {
                        s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)
                    }
        return self.sibling_functions[path].get(original)

    def _schema(self, node: cst.BaseExpression | cst.Name) -> dict | None:
        if isinstance(node, cst.Name):
            function = self._function(node.value)
            if function is not None:
                return function_schema(function)
            bound = bound_expression(self.rule, node)
            return self._schema(bound) if bound is not None else None
        if isinstance(node, cst.Call):
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            if positional and isinstance(positional[0], cst.Name):
                function = self._function(positional[0].value)  # _schema(fn), Tool.from_function(fn)
                return function_schema(function) if function is not None else None
            return None
        if isinstance(node, cst.Dict):
            try:
                return ast.literal_eval(self.context.module.code_for_node(node))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return None
        return None


def _chosen(decorator: cst.BaseExpression) -> bool:
    """`@agent.tool(prepare=fn)`: a tool the run may leave out of a step (`chatbound.frameworks`)."""
    return isinstance(decorator, cst.Call) and any(
        a.keyword is not None
        and a.keyword.value in frameworks.TOOL_CHOICES
        and not (isinstance(a.value, cst.Name) and a.value.value in ("None", "False"))
        for a in decorator.args
    )


def _system_contents(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The contents of the system messages written in `node` (`{"role": "system", "content": ...}`)."""
    return [
        element.value
        for message in walk(node)
        if isinstance(message, cst.Dict) and role_of(message) == "system"
        for element in message.elements
        if isinstance(element, cst.DictElement)
        and isinstance(element.key, cst.SimpleString)
        and element.key.evaluated_value == "content"
    ]


def function_schema(function: cst.FunctionDef) -> dict:
    """The JSON schema an SDK derives from a Python function: name, docstring, typed parameters."""
    properties, required = {}, []
    for param in function.params.params:
        if param.name.value in ("self", "cls", "ctx", "context"):
            continue
        annotation = param.annotation.annotation if param.annotation is not None else None
        kind = annotation.value if isinstance(annotation, cst.Name) else ""
        properties[param.name.value] = {"type": PY_TYPES.get(kind, "string")}
        if param.default is None:
            required.append(param.name.value)
    return {
        "type": "function",
        "function": {
            "name": function.name.value,
            "description": function.get_docstring() or "",
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def _registers(decorator: cst.BaseExpression, server: str) -> bool:
    """`@server.tool` or `@server.tool(...)`."""
    target = decorator.func if isinstance(decorator, cst.Call) else decorator
    return (
        isinstance(target, cst.Attribute)
        and target.attr.value == "tool"
        and isinstance(target.value, cst.Name)
        and target.value.value == server
    )
