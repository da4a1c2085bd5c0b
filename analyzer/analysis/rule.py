"""The rule base class: metadata, documentation, examples and `report()`.

A rule is a LibCST batchable visitor (Fixit 2's model): every rule of a run visits the
same tree in one traversal over one shared metadata wrapper.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import libcst as cst
from libcst.metadata import (
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from chatbound.findings import Finding, Fix, Related, Severity, Span
from chatbound.syntax.positions import Positions
from chatbound.syntax.qualified import QualifiedNames
from chatbound.syntax.scopes import scopes
from chatbound.syntax.visitors import parents
from chatbound.vocabulary.summaries import Linked, Place

if TYPE_CHECKING:
    from chatbound.syntax.stdlib_tree import PythonTree

HOMEPAGE = "https://github.com/chatbound/chatbound"


@dataclass(frozen=True)
class Option:
    """A rule setting read from `[tool.chatbound.options]`."""

    type: type
    default: Any
    help: str


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag, at this 1-based line and column."""

    code: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Valid:
    """An example the rule must not flag (plain strings in VALID mean the same)."""

    code: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class RuleContext:
    """What a rule may know about the file it visits."""

    path: str
    module: cst.Module
    options: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    directory: str = ""  # the file's folder, absolute, for data files it reads by literal path
    data_files: list[str] = field(default_factory=list)  # data files read, so a cached result can be checked
    project: Linked | None = None  # what the project pass linked for this file (chatbound.analysis.project)
    source: bytes | str = ""  # the module's text, which positions read statements' lines from


SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead")
# What `--fix` edits for this rule, and which SDKs and frameworks it reads (optional sections).
EXTRA_SECTIONS = ("Fix", "Frameworks covered")


_RESOLVED: dict[int, tuple[MetadataWrapper, dict]] = {}  # the providers resolved for the file analyzed last


class _LazyMetadata(Mapping):
    """A visitor's metadata, each provider resolved when asked, once per tree for all the rules
    that ask (a file is analyzed by several rules at once, one file at a time)."""

    def __init__(self, wrapper: MetadataWrapper, providers: frozenset, source: bytes | str = "") -> None:
        self.wrapper = wrapper
        self.providers = providers
        self.source = source
        shared = _RESOLVED.get(id(wrapper))
        if shared is None or shared[0] is not wrapper:
            _RESOLVED.clear()
            shared = _RESOLVED[id(wrapper)] = (wrapper, {})
        self.resolved: dict = shared[1]

    def __getitem__(self, provider):
        if provider not in self.providers:
            raise KeyError(provider)
        if provider not in self.resolved:
            if provider is ParentNodeProvider:  # the same mapping, without a visitor traversal
                self.resolved[provider] = parents(self.wrapper.module)
            elif provider is ScopeProvider:  # what the rules ask of it, at a tenth of the cost
                self.resolved[provider] = scopes(self.wrapper.module)
            elif provider is PositionProvider:  # the same positions, each statement's when asked
                self.resolved[provider] = Positions(self.wrapper.module, self[ParentNodeProvider], self.source)
            elif provider is QualifiedNameProvider:  # imported names only, without the scope analysis
                self.resolved[provider] = QualifiedNames(self.wrapper.module)
            else:
                self.resolved[provider] = self.wrapper.resolve(provider)
        return self.resolved[provider]

    def __contains__(self, provider) -> bool:
        return provider in self.providers

    def __iter__(self):
        return iter(self.providers)

    def __len__(self) -> int:
        return len(self.providers)


class Rule(cst.BatchableCSTVisitor):
    """Subclasses set the class attributes below and write their docs as the docstring.

    The docstring has ruff's four sections (`## What it does`, `## Why is this bad?`,
    `## Example`, `## Use instead`), then `## Fix` and `## Frameworks covered` where they
    apply. The Example must be flagged and Use instead must not (a test runs both).
    `chatbound rule ID`, SARIF `help` and docs/rules/ID.md all come from it (chatbound.interfaces.docs).
    """

    ID: ClassVar[str]
    NAME: ClassVar[str]
    SEVERITY: ClassVar[Severity]
    SUMMARY: ClassVar[str]
    TAGS: ClassVar[tuple[str, ...]] = ("cost", "llm")
    PRECISION: ClassVar[str] = "high"
    OPTIONS: ClassVar[dict[str, Option]] = {}
    VALID: ClassVar[Sequence[str | Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()
    # What a file must contain for the rule to report: words (matched case-insensitively
    # anywhere in the file's bytes) or compiled bytes patterns of the code shape a finding
    # needs (re.compile(rb"\bbind_tools\s*\(")), or a tuple of patterns that must all occur.
    # The pre-check parses only files in which one of the selected rules' triggers occurs.
    # None means "always parse": every finding must sit where one trigger matches, or leave it None.
    TRIGGERS: ClassVar[tuple[str | re.Pattern[bytes] | tuple[re.Pattern[bytes], ...], ...] | None] = None

    METADATA_DEPENDENCIES = (
        PositionProvider,
        ParentNodeProvider,
        ScopeProvider,
        QualifiedNameProvider,
    )

    @classmethod
    def may_report(cls, source: bytes, options: dict[str, Any]) -> bool:
        """A cheaper test than the parse, after TRIGGERS, that may use the run's options (a size
        the rule's threshold needs); False only where the rule cannot report on the file."""
        return True

    @classmethod
    def may_offer(cls, source: bytes, options: dict[str, Any]) -> bool:
        """For a cross-module rule: whether a module its triggers miss may still hand its
        importers a value the rule sizes (a long text kept under any name); the project pass
        summarises such a module."""
        return False

    # A test on CPython's parse of the file (`may_report_tree(tree, options)`, tree a
    # `chatbound.syntax.stdlib_tree.PythonTree`: `tree.nodes(ast.Call)` lists the nodes of a type, from one
    # walk shared by every rule), for a rule whose triggers are common words: False only where
    # the rule cannot report. A file is parsed with LibCST only if one of its rules lacks this
    # test or passes it (the stdlib parse is several times cheaper and doubles as the syntax check).
    may_report_tree: ClassVar[Callable[[PythonTree, dict[str, Any]], bool] | None] = None

    # True for a rule that reads what the project pass linked (`RuleContext.project`): it also
    # runs on a file whose own triggers do not occur but whose imports offer a send or a
    # history, and its triggers tell which modules may offer one (see chatbound.analysis.project).
    CROSS_MODULE: ClassVar[bool] = False
    # True for a rule that reads what the project pass linked only where its own triggers occur
    # (a handoff is always a call of the file): a file it runs on is linked, nothing more.
    READS_LINKS: ClassVar[bool] = False
    # True for a cross-module rule whose modules hand their importers a value to follow (what a
    # function returns): a file importing a module the rule's pre-check passes is linked too,
    # though nothing in the file itself triggers a rule.
    LINKS_IMPORTERS: ClassVar[bool] = False

    def __init__(self, context: RuleContext) -> None:
        super().__init__()
        self.context = context

    @contextmanager
    def resolve(self, wrapper: MetadataWrapper) -> Iterator[None]:
        """Metadata on first use, not before the traversal: each provider is a full pass over
        the tree in Python (several times the parse), and most files never ask for scopes,
        qualified names or positions (those are needed only where a rule reports)."""
        self.metadata = _LazyMetadata(wrapper, self.get_inherited_dependencies(), self.context.source)
        yield
        self.metadata = {}

    # --- documentation -------------------------------------------------------------

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def section(cls, title: str) -> str:
        match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", cls.doc(), re.S | re.M)
        return match.group(1).strip() if match else ""

    @classmethod
    def full_description(cls) -> str:
        """The first paragraph of `What it does`, then `Why is this bad?`, as prose within
        SARIF's 1024 characters."""
        overview = cls.section(SECTIONS[0]).split("\n\n", 1)[0]
        text = " ".join(f"{overview} {cls.section(SECTIONS[1])}".split())
        return text if len(text) <= 1024 else text[:1021].rsplit(" ", 1)[0] + "..."

    @classmethod
    def help_url(cls) -> str:
        """The rule's page, written by chatbound.interfaces.docs."""
        return f"{HOMEPAGE}/blob/main/docs/rules/{cls.ID}.md"

    # --- reporting -----------------------------------------------------------------

    def option(self, name: str) -> Any:
        return self.context.options.get(name, self.OPTIONS[name].default)

    def span(self, node: cst.CSTNode) -> Span:
        """1-based line and column: the one place LibCST's 0-based columns are converted."""
        pos = self.get_metadata(PositionProvider, node)
        return Span(pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1)

    def related(self, node: cst.CSTNode | Place, message: str) -> Related:
        """A related location: a node of this file, or a place in another module."""
        if isinstance(node, Place):
            return Related(node.span, message, node.path)
        return Related(self.span(node), message)

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        suggestion: str = "",
        related: Sequence[Related] = (),
        fix: Fix | None = None,
        properties: dict[str, Any] | None = None,
    ) -> None:
        statement = self._statement_of(node)
        self.context.findings.append(
            Finding(
                rule_id=self.ID,
                severity=self.SEVERITY,
                message=message,
                path=self.context.path,
                span=self.span(node),
                suggestion=suggestion,
                related=tuple(related),
                snippet=self.context.module.code_for_node(node),
                scope=self._scope_of(node),
                statement_line=self.span(statement).line if statement is not None else 0,
                fix=fix,
                properties=properties or {},
            )
        )

    def _ancestors(self, node: cst.CSTNode):
        while True:
            try:
                node = self.get_metadata(ParentNodeProvider, node)
            except KeyError:
                return
            yield node

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        for parent in self._ancestors(node):
            if isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return parent
        return None

    def _scope_of(self, node: cst.CSTNode) -> str:
        names = [
            parent.name.value for parent in self._ancestors(node) if isinstance(parent, (cst.FunctionDef, cst.ClassDef))
        ]
        return ".".join(reversed(names))
