"""Where retrieved results go: `RetrievalFacts.reach(node, count)` follows them to a model.

Retrieval asks for a number of results (`similarity_search(q, k=20)`, `as_retriever(
search_kwargs={"k": 20})`, Chroma `n_results`, a pgvector `LIMIT`); whether that many reach a
prompt depends on what the code does with them next. The results are followed through names
(the value a read sees, `ChatFacts.assignment_before`), copies (`sorted`, `list`), joins,
f-strings, message dicts and lists, helper functions of the module (into their parameter, out
of their return) and loops that accumulate text, until they are cut or reach a model:

- cut: a slice that keeps at most the limit (`docs[:4]`, `sorted(...)[:5]`), one element
  (`docs[0]`), a comprehension with a condition (a score threshold), a reranker keeping a
  few (`CohereRerank(top_n=4)`, `compress_documents`, `postprocess_nodes`), a
  `score_threshold=`. A slice whose bound is not a constant counts as a cut: never guess.
- reach: an argument of a model call (`chatbound.vocabulary.sinks`), of a chain or query engine built
  from a retriever, a LangChain `|` pipe, a LlamaIndex query/chat engine itself, or an
  agent's tools whose results go back to its model (`chatbound.frameworks.tool_results`).

Across modules (the project pass): results passed to a function of another module reach a
model when that function sends its parameter; a function that returns results with no cut is
recorded in its module's summary (`returned`), and its callers in other modules follow them
from the call (`reach_of_returned`). Anything else (results passed to a function that sends
nothing, stored on an object, never used) reaches no model the analysis can see: no finding. Framework facts below are checked
against langchain-core 1.8.4 / langchain 0.3 and llama-index-core 0.12 (names of the
retriever builders, retrieve methods, chains and engines that take a retriever).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import libcst as cst

from chatbound import frameworks
from chatbound.analysis.histories import walk
from chatbound.syntax.messages import ast_callee_name, callee_name, slice_of
from chatbound.syntax.values import Constant, bound_expression, constant, literal
from chatbound.vocabulary.sinks import dotted, keyword

# callee name -> (keyword, position of that argument when passed positionally, or None)
COUNT_ARGUMENT = {
    "similarity_search": ("k", 1),
    "asimilarity_search": ("k", 1),
    "similarity_search_with_score": ("k", 1),
    "asimilarity_search_with_score": ("k", 1),
    "similarity_search_with_relevance_scores": ("k", 1),
    "asimilarity_search_with_relevance_scores": ("k", 1),
    "similarity_search_by_vector": ("k", 1),
    "asimilarity_search_by_vector": ("k", 1),
    "max_marginal_relevance_search": ("k", 1),
    "amax_marginal_relevance_search": ("k", 1),
    "max_marginal_relevance_search_by_vector": ("k", 1),
    "query_points": ("limit", None),  # Qdrant
    "near_text": ("limit", None),  # Weaviate v4 collection.query.*
    "near_vector": ("limit", None),
    "hybrid": ("limit", None),
    "with_limit": ("limit", 0),  # Weaviate v3 query builder
}
# Keywords that mean "results per query" wherever they appear on a retrieval-shaped call.
ANYWHERE = ("similarity_top_k",)
RETRIEVAL_NAME = re.compile(r"retriev|search|query|vector|index", re.I)
RESULT_COUNT = ("top_k", "n_results")  # Pinecone, Haystack, LlamaIndex; Chroma
RERANK_NAME = re.compile(r"rerank|^compress_documents$|^postprocess_nodes$", re.I)
RERANK_KEEP = ("top_n", "top_k", "k")
PGVECTOR_LIMIT = re.compile(r"(<->|<=>|<#>|<\+>).*?\bLIMIT\s+(\d+)", re.I | re.S)

# MongoDB Atlas Vector Search: `collection.aggregate([{"$vectorSearch": {..., "limit": N}}, ...])`
# returns N documents (the stage's `limit`: mongodb.com/docs/atlas/atlas-vector-search/vector-search-stage/);
# a later `$limit` or `$match` stage may keep fewer: a cut, never guessed
VECTOR_STAGE = "$vectorSearch"
CUTTING_STAGES = ("$limit", "$match")

# calls that build a retriever (an object that returns results when asked), not results
RETRIEVERS = re.compile(r"^(as_retriever|\w*Retriever)$")
# what a retriever is asked with (LangChain BaseRetriever, LlamaIndex BaseRetriever)
RETRIEVE_METHODS = frozenset(
    "invoke ainvoke get_relevant_documents aget_relevant_documents retrieve aretrieve batch abatch".split()
)
# a LlamaIndex engine: retrieval and its LLM in one object, so the results reach a model
ENGINES = frozenset({"as_query_engine", "as_chat_engine"})
# chains and engines that take a retriever and prompt their model with its results
CHAIN_BUILDERS = frozenset({"create_retrieval_chain", "create_retriever_tool", "RetrieverQueryEngine"})
CHAIN_CLASSES = re.compile(r"(Chain|QA\w*|QueryEngine|ChatEngine|RetrieverTool)$")
# calls that hand their argument back whole, as a copy or as text
PASSTHROUGH = frozenset("list tuple sorted reversed enumerate join format dumps str".split())
# SQL drivers: the rows of the query just executed
FETCHES = frozenset("fetch fetchall fetchmany all scalars".split())


# the shapes of a retrieval in a file's bytes (the rules' pre-check): similarity_search* and
# max_marginal_relevance_search* (and their a- twins) called, the other searches that take a count,
# a result-count keyword, a pgvector distance operator, a `$vectorSearch` stage
RETRIEVAL_TRIGGERS = (
    re.compile(rb"(?:similarity_search|max_marginal_relevance_search)\w*[\s)]*\("),
    re.compile(
        rb"\b(?:%s)[\s)]*\("
        % b"|".join(name.encode() for name in (*COUNT_ARGUMENT, "as_retriever") if "search" not in name)
    ),
    re.compile(rb"\b(?:%s)\s*=" % b"|".join(k.encode() for k in (*ANYWHERE, *RESULT_COUNT, "collection_name"))),
    re.compile(rb"<->|<=>|<#>|<\+>"),
    re.compile(re.escape(VECTOR_STAGE.encode())),
)


@dataclass(frozen=True)
class Reach:
    """Results of one retrieval reaching a model: `node` is where they enter the model's call."""

    node: cst.CSTNode
    count: int  # how many of them still


# syntax steps a follow takes from the retrieval to the model call (each element, dict entry,
# binding and call is one): deep enough for results joined, put in a message, carried and sent
FOLLOW_DEPTH = 24


def count_args(call: cst.Call) -> list[tuple[str, cst.CSTNode, cst.BaseExpression]]:
    """(label, node to report, value expression) for every result-count argument of a call."""
    name = callee_name(call)
    found = []
    if name in COUNT_ARGUMENT:
        key, position = COUNT_ARGUMENT[name]
        arg = keyword(call, key)
        if arg is None and position is not None:
            positional = [a for a in call.args if a.keyword is None and not a.star]
            arg = positional[position] if len(positional) > position else None
        if arg is not None and (name != "hybrid" or keyword(call, "query") is not None):
            found.append((key, arg, arg.value))
    if name == "search" and keyword(call, "collection_name") is not None:  # Qdrant
        arg = keyword(call, "limit")
        if arg is not None:
            found.append(("limit", arg, arg.value))
    for key in ANYWHERE:
        arg = keyword(call, key)
        if arg is not None:
            found.append((key, arg, arg.value))
    if RETRIEVAL_NAME.search(name):
        for key in RESULT_COUNT:
            arg = keyword(call, key)
            if arg is not None:
                found.append((key, arg, arg.value))
    search_kwargs = keyword(call, "search_kwargs")
    if name == "as_retriever" and search_kwargs is not None and isinstance(search_kwargs.value, cst.Dict):
        for element in search_kwargs.value.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                if element.key.evaluated_value == "k":
                    found.append(("search_kwargs['k']", element, element.value))
    return found


# Chroma `collection.query(query_texts=...)` asks for its default n_results (10) when none is given
QUERY_INPUTS = frozenset(("query_texts", "query_embeddings"))


def retrieves(facts, call: cst.Call) -> bool:
    """Whether `call` returns retrieved results, whatever it asks for: a search that takes a
    result count (given or left at its default), or a retriever asked (`retriever.invoke(q)`
    where `retriever` is bound to `store.as_retriever(...)` or a retriever class)."""
    name = callee_name(call)
    if name in COUNT_ARGUMENT and name not in ("hybrid", "with_limit") or count_args(call):
        return not RETRIEVERS.match(name)
    if name == "query" and any(a.keyword is not None and a.keyword.value in QUERY_INPUTS for a in call.args):
        return True
    if name not in RETRIEVE_METHODS or not isinstance(call.func, cst.Attribute):
        return False
    receiver = call.func.value
    bound = facts.assignment_before(receiver) if isinstance(receiver, cst.Name) else receiver
    return isinstance(bound, cst.Call) and RETRIEVERS.match(callee_name(bound)) is not None


def counts_asked(rule, call: cst.Call) -> list[tuple[str, cst.CSTNode, Constant]]:
    """(label, node that sets the count, the count) for every int count a retrieval call asks
    for (`count_args`, a `$vectorSearch` stage's `limit`), read as `rule`'s module binds it."""
    found = []
    for label, node, value in count_args(call):
        count = constant(rule, value)
        if count is not None and isinstance(count.value, int):
            found.append((label, node, count))
    if callee_name(call) == "aggregate" and call.args:
        pipeline = call.args[0].value
        pipeline = bound_expression(rule, pipeline) if isinstance(pipeline, cst.Name) else pipeline
        element = vector_stage_limit(pipeline) if pipeline is not None else None
        count = constant(rule, element.value) if element is not None else None
        if count is not None and isinstance(count.value, int):
            found.append((f"{VECTOR_STAGE} limit", element, count))
    return found


def may_count(call: ast.Call) -> bool:
    """Whether `count_args` may find a count on this call of CPython's tree (the rule's
    `may_report_tree`): the same callee names and keywords, their values unread."""
    name, keywords = ast_callee_name(call), {k.arg for k in call.keywords}
    if name in COUNT_ARGUMENT:
        key, position = COUNT_ARGUMENT[name]
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        if key in keywords or (position is not None and len(positional) > position):
            return True
    return (
        (name == "search" and {"collection_name", "limit"} <= keywords)
        or not keywords.isdisjoint(ANYWHERE)
        or (RETRIEVAL_NAME.search(name) is not None and not keywords.isdisjoint(RESULT_COUNT))
        or (name == "as_retriever" and "search_kwargs" in keywords)
    )


def vector_stage_limit(pipeline: cst.BaseExpression) -> cst.DictElement | None:
    """The `limit` entry of the `$vectorSearch` stage of a pipeline written as a list, or None
    when there is none or a later stage may cut the results."""
    stages = [_stage(e.value) for e in pipeline.elements] if isinstance(pipeline, cst.List) else []
    for index, (name, body) in enumerate(stages):
        if name == VECTOR_STAGE and isinstance(body, cst.Dict):
            if any(later in CUTTING_STAGES for later, _ in stages[index + 1 :]):
                return None
            return next(
                (e for e in body.elements if isinstance(e, cst.DictElement) and literal(e.key) == "limit"), None
            )
    return None


def _stage(node: cst.BaseExpression) -> tuple[str | None, cst.BaseExpression | None]:
    """`{"$name": body}` -> ("$name", body)."""
    if isinstance(node, cst.Dict) and len(node.elements) == 1 and isinstance(node.elements[0], cst.DictElement):
        name = literal(node.elements[0].key)
        return (name if isinstance(name, str) else None), node.elements[0].value
    return None, None


def _thresholded(call: cst.Call) -> bool:
    """`score_threshold=` on the search, or in a retriever's search_kwargs."""
    if keyword(call, "score_threshold") is not None:
        return True
    search_kwargs = keyword(call, "search_kwargs")
    return (
        search_kwargs is not None
        and isinstance(search_kwargs.value, cst.Dict)
        and any(
            isinstance(e, cst.DictElement) and literal(e.key) == "score_threshold" for e in search_kwargs.value.elements
        )
    )


class RetrievalFacts:
    """Follows retrieval results through one module (`facts` are its `ChatFacts`)."""

    def __init__(self, facts, limit: int, keeps_few) -> None:
        self.facts = facts
        self.limit = limit
        self.keeps_few = keeps_few  # keeps_few(call) -> whether a reranker call keeps <= limit
        # the functions whose return the follow reached, with how many results and of what kind
        # ("results" or "retriever"): what the module's summary offers its importers
        self.returned: list[tuple[cst.FunctionDef, int, str]] = []
        self._sink_args = {id(a): call for call, sink in facts.sites() for a in sink.content}
        self._through: dict[int, cst.CSTNode] = {}  # a tuple or list literal -> the element the follow came up by
        # each step answered once: a value read in many places, by many callers, is followed
        # from each place once, not once per path to it (the follow stays linear in the module)
        self._followed: dict[tuple[int, int, str, int, int], list[Reach]] = {}

    # --- where the follow starts ---------------------------------------------------------

    def reach_of_call(self, call: cst.Call, count: int) -> list[Reach]:
        """Where the results of a retrieval call with `count` results reach a model."""
        name = callee_name(call)
        if _thresholded(call):
            return []
        if name in ENGINES:
            return [] if self._postprocessed(call) else [Reach(call, count)]
        if RETRIEVERS.match(name) or name == "as_retriever":
            return self._follow(call, count, "retriever", call, 0)
        return self._follow(call, count, "results", call, 0)

    def reach_of_returned(self, call: cst.Call, count: int, kind: str) -> list[Reach]:
        """Where what a call of another module's function returns (`count` results, or a
        retriever asking for them: `kind`) reaches a model."""
        return self._follow(call, count, kind, call, 0)

    def reach_of_query(self, text: cst.CSTNode, count: int) -> list[Reach]:
        """A SQL query string: the rows of the call that runs it (`conn.fetch(SQL)`), or of the
        driver's `fetchall()` after `cur.execute(SQL)` in the same function."""
        parent = self.facts.parent(text)
        if isinstance(parent, cst.Assign) and parent.value is text:  # SQL = "SELECT ..."
            return [
                r for t in parent.targets for load in self._loads(t.target) for r in self.reach_of_query(load, count)
            ]
        call = self.facts.parent(parent) if isinstance(parent, cst.Arg) else None
        if not isinstance(call, cst.Call):
            return []
        if callee_name(call) == "text":  # sqlalchemy text(SQL)
            return self.reach_of_query(call, count)
        if callee_name(call) in FETCHES:
            return self._follow(call, count, "results", call, 0)
        if callee_name(call) != "execute" or not isinstance(call.func, cst.Attribute):
            return []
        outer = self.facts.parent(self.facts.parent(call))
        if isinstance(outer, cst.Call) and callee_name(outer) in FETCHES:
            return self._follow(outer, count, "results", outer, 0)
        cursor = self.facts.code(call.func.value)
        function = self.facts.function_of(call)
        return [
            r
            for later in self.facts.nodes.calls
            if callee_name(later) in FETCHES
            and isinstance(later.func, cst.Attribute)
            and self.facts.code(later.func.value) == cursor
            and self.facts.function_of(later) is function
            and self.facts.order(later) > self.facts.order(call)
            for r in self._follow(later, count, "results", later, 0)
        ]

    # --- the follow ---------------------------------------------------------------------------

    def _follow(self, node: cst.CSTNode, count: int, kind: str, entry: cst.CSTNode, depth: int) -> list[Reach]:
        """Where the value of `node` (results, or a retriever) reaches a model; `entry` is the
        node to report when it does (the read that brought it into the current expression)."""
        if depth > FOLLOW_DEPTH:
            return []
        key = (id(node), count, kind, id(entry), depth)
        if key not in self._followed:
            self._followed[key] = []  # a cycle (a function returning into its own caller) ends here
            self._followed[key] = self._step(node, count, kind, entry, depth)
        return self._followed[key]

    def _step(self, node: cst.CSTNode, count: int, kind: str, entry: cst.CSTNode, depth: int) -> list[Reach]:
        parent = self.facts.parent(node)
        if parent is None:
            return []
        up = lambda: self._follow(parent, count, kind, entry, depth + 1)  # noqa: E731
        if isinstance(
            parent,
            (
                cst.Await,
                cst.FormattedStringExpression,
                cst.FormattedString,
                cst.Element,
                cst.StarredElement,
                cst.List,
                cst.Tuple,
                cst.Set,
                cst.Dict,
                cst.DictElement,
                cst.StarredDictElement,
                cst.BinaryOperation,
                cst.IfExp,
            ),
        ):
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.BitOr):
                return [Reach(node, count)]  # a LangChain pipe: the chain's model gets them
            if isinstance(parent, cst.DictElement) and parent.key is node:
                return []
            if isinstance(parent, (cst.Tuple, cst.List)):
                self._through[id(parent)] = node
            return up()
        if kind == "retriever":
            return self._follow_retriever(node, parent, count, entry, depth)
        if isinstance(parent, cst.Subscript) and parent.value is node:
            return self._follow_subscript(parent, count, entry, depth)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            call = self.facts.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent:
                return self._follow(call, count, kind, entry, depth + 1) if parent.attr.value in ("get", "copy") else []
            return up()  # `response.points`, `hits.objects`: the results of a response object
        if isinstance(parent, cst.CompFor) and parent.iter is node:
            comprehension = self.facts.parent(parent)
            if parent.ifs or parent.inner_for_in is not None:
                return []  # a filter (a score threshold) keeps an unknown few
            return self._follow(comprehension, count, kind, entry, depth + 1)
        if isinstance(parent, cst.Arg):
            return self._follow_argument(node, parent, count, kind, entry, depth)
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.Return)):
            return self._follow_binding(node, parent, count, kind, depth)
        if isinstance(parent, cst.For) and parent.iter is node:
            return self._follow_loop(parent, count, depth)
        return []

    def _follow_subscript(self, subscript: cst.Subscript, count: int, entry, depth: int) -> list[Reach]:
        part = slice_of(subscript)
        if part is None:
            index = subscript.slice[0].slice if len(subscript.slice) == 1 else None
            key = literal(index.value) if isinstance(index, cst.Index) else None
            if isinstance(key, str) or (key == 0 and self._is_batch(subscript)):
                return self._follow(subscript, count, "results", entry, depth + 1)  # hits["documents"][0]
            if self._came_by(subscript.value, key):
                return self._follow(subscript, count, "results", entry, depth + 1)  # `pair = (msgs, x)`; `pair[0]`
            return []  # one result
        if part.step is not None:
            return []
        lower = literal(part.lower) if part.lower is not None else 0
        upper = literal(part.upper) if part.upper is not None else count
        if not isinstance(lower, int) or not isinstance(upper, int) or lower < 0:
            return []  # a bound the analysis cannot read: never guess
        kept = (min(upper, count) if upper >= 0 else count + upper) - lower
        if kept <= self.limit:
            return []
        return self._follow(subscript, kept, "results", entry, depth + 1)

    def _came_by(self, container: cst.BaseExpression, index: object) -> bool:
        """Whether element `index` of the tuple or list literal a local `container` is bound to is
        the one the follow came up by (`pair = (msgs, None)`, then `pair[0]`)."""
        bound = self.facts.assignment_before(container) if isinstance(container, cst.Name) else None
        if not isinstance(bound, (cst.Tuple, cst.List)) or not isinstance(index, int) or isinstance(index, bool):
            return False
        elements = bound.elements
        if any(isinstance(e, cst.StarredElement) for e in elements) or not 0 <= index < len(elements):
            return False
        return self._through.get(id(bound)) is elements[index]

    def _is_batch(self, subscript: cst.Subscript) -> bool:
        """`res["documents"][0]`: the first query's list of a batched response (Chroma)."""
        inner = subscript.value
        if not isinstance(inner, cst.Subscript) or len(inner.slice) != 1:
            return False
        index = inner.slice[0].slice
        return isinstance(index, cst.Index) and isinstance(literal(index.value), str)

    def _follow_argument(self, node, arg: cst.Arg, count: int, kind: str, entry, depth: int) -> list[Reach]:
        call = self.facts.parent(arg)
        if not isinstance(call, cst.Call):
            return []
        if id(node) in self._sink_args or frameworks.tool_results(self.facts, call, arg):
            return [Reach(entry if self.facts.inside(entry, call) else node, count)]
        name = callee_name(call)
        if RERANK_NAME.search(name) or (
            isinstance(call.func, cst.Attribute) and RERANK_NAME.search(dotted(call.func)[-2])
        ):
            return [] if self.keeps_few(call) else self._follow(call, count, kind, entry, depth + 1)
        if name in PASSTHROUGH or self.facts.builds_record(call):  # `Box(msgs)`: read back as `box.items`
            return self._follow(call, count, kind, entry, depth + 1)
        found = []
        for function in self.facts.callees(call):
            param = self._param_for(call, function, arg)
            if param is not None:
                found.extend(
                    r
                    for load in self._loads(param.name, function)
                    for r in self._follow(load, count, kind, load, depth + 1)
                )
        return found

    def _follow_retriever(self, node, parent, count: int, entry, depth: int) -> list[Reach]:
        if isinstance(parent, cst.Attribute) and parent.value is node:
            call = self.facts.parent(parent)
            if isinstance(call, cst.Call) and call.func is parent and parent.attr.value in RETRIEVE_METHODS:
                return self._follow(call, count, "results", call, depth + 1)
            return []
        if isinstance(parent, cst.Arg):
            call = self.facts.parent(parent)
            if not isinstance(call, cst.Call):
                return []
            name = callee_name(call)
            parts = dotted(call.func)
            owner = parts[-2] if len(parts) > 1 else name
            if name == "ContextualCompressionRetriever":
                compressor = keyword(call, "base_compressor")
                reranker = compressor.value if compressor is not None else None
                if isinstance(reranker, cst.Call) and self.keeps_few(reranker):
                    return []
                return self._follow(call, count, "retriever", call, depth + 1)
            if name in CHAIN_BUILDERS or CHAIN_CLASSES.search(owner) or CHAIN_CLASSES.search(name):
                return [] if self._postprocessed(call) else [Reach(node, count)]
            if RETRIEVERS.match(name) and name != "as_retriever":
                return self._follow(call, count, "retriever", call, depth + 1)  # a retriever wrapping it
            found = []
            for function in self.facts.callees(call):
                param = self._param_for(call, function, parent)
                if param is not None:
                    found.extend(
                        r
                        for load in self._loads(param.name, function)
                        for r in self._follow(load, count, "retriever", load, depth + 1)
                    )
            return found
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.Return)):
            return self._follow_binding(node, parent, count, "retriever", depth)
        return []

    def _follow_binding(self, node, parent, count: int, kind: str, depth: int) -> list[Reach]:
        """Through a name (its reads that see this binding), an attribute of `self` (its reads
        in the class), or a return (the calls of the function)."""
        if isinstance(parent, cst.Return):
            function = self.facts.function_of(parent)
            self.returned.append((function, count, kind))
            return [
                r
                for call in self.facts.nodes.calls
                if function in self.facts.callees(call)
                for r in self._follow(call, count, kind, call, depth + 1)
            ]
        if getattr(parent, "value", None) is not node:
            return []
        targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
        reads = [load for target in targets for load in [*self._loads(target), *self._attribute_reads(target)]]
        return [r for read in reads for r in self._follow(read, count, kind, read, depth + 1)]

    def _attribute_reads(self, target: cst.CSTNode) -> list[cst.Attribute]:
        """`self.retriever = ...`: every read of `self.retriever` in the class's methods."""
        klass = self.facts.class_of(target)
        if not (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
            and klass is not None
        ):
            return []
        return [
            n
            for n in walk(klass)
            if isinstance(n, cst.Attribute)
            and n is not target
            and n.attr.value == target.attr.value
            and isinstance(n.value, cst.Name)
            and n.value.value == "self"
            and not isinstance(self.facts.parent(n), cst.AssignTarget)
        ]

    def _follow_loop(self, loop: cst.For, count: int, depth: int) -> list[Reach]:
        """`for d in docs: context += d.page_content` (or `parts.append(...)`): the text built
        from every result, read after the loop. A loop that can stop early keeps a few."""
        body = list(walk(loop.body))
        if any(isinstance(n, (cst.Break, cst.Return)) for n in body):
            return []
        grown = {n.target.value for n in body if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name)}
        grown |= {
            n.func.value.value
            for n in body
            if isinstance(n, cst.Call)
            and callee_name(n) in ("append", "extend")
            and isinstance(n.func, cst.Attribute)
            and isinstance(n.func.value, cst.Name)
        }
        function = self.facts.function_of(loop)
        end = max(self.facts.order(n) for n in body) if body else self.facts.order(loop)
        found = []
        for name in grown:
            for load in self._names_in(function):
                if load.value == name and self.facts.order(load) > end and self.facts.bound_value(load) is None:
                    found.extend(self._follow(load, count, "results", load, depth + 1))
        return found

    # --- names ---------------------------------------------------------------------------------

    def _loads(self, target: cst.CSTNode, function: cst.FunctionDef | None = None) -> list[cst.Name]:
        """The reads of a name that see this binding of it (given `function`: its parameter's)."""
        if not isinstance(target, cst.Name):
            return []
        bound = self.facts.bound_value(target) if function is None else None
        scope = function if function is not None else self.facts.function_of(target)
        return [
            name
            for name in self._names_in(scope)
            if name.value == target.value
            and name is not target
            and self._is_read(name)
            and (
                isinstance(self.facts.assignment_before(name), cst.Param)
                if function is not None
                else self.facts.assignment_before(name) is bound
            )
        ]

    def _is_read(self, name: cst.Name) -> bool:
        """A name read as a value: not a binding, an attribute's name, a keyword or a parameter."""
        parent = self.facts.parent(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            return False
        if isinstance(parent, cst.Arg) and parent.keyword is name:
            return False
        return not isinstance(parent, cst.Param) and self.facts.bound_value(name) is None

    def _names_in(self, scope: cst.CSTNode | None) -> list[cst.Name]:
        root = scope if scope is not None else self.facts.rule.context.module
        return [n for n in walk(root) if isinstance(n, cst.Name)]

    def _param_for(self, call: cst.Call, function: cst.FunctionDef, arg: cst.Arg) -> cst.Param | None:
        for param in [*function.params.posonly_params, *function.params.params, *function.params.kwonly_params]:
            if self.facts.argument_for(call, function, param.name.value) is arg.value:
                return param
        return None

    def _postprocessed(self, call: cst.Call) -> bool:
        """`node_postprocessors=[SentenceTransformerRerank(top_n=3)]`: a reranker keeps a few."""
        post = keyword(call, "node_postprocessors")
        return post is not None and any(
            isinstance(n, cst.Call) and RERANK_NAME.search(callee_name(n)) and self.keeps_few(n)
            for n in walk(post.value)
        )
