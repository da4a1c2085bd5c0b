"""`[tool.chatbound]` in pyproject.toml: found by walking up, validated key by key."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from chatbound.findings import Severity
from chatbound.run.registry import all_rules, unknown_codes

DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".env",
    "env",
    ".tox",
    ".nox",
    ".eggs",
    "site-packages",
    "node_modules",
    "build",
    "dist",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".chatbound_cache",
)


class ConfigError(Exception):
    """A bad configuration: reported in one line, exit code 2."""


@dataclass
class Settings:
    root: Path = field(default_factory=Path.cwd)
    config_path: Path | None = None
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    fail_on: Severity = Severity.LOW
    encoding: str = "cl100k_base"
    turn_tokens: int = 400
    options: dict[str, Any] = field(default_factory=dict)
    notebooks: bool = True  # check Jupyter notebooks (.ipynb) found in folders
    project_max_mb: int = 8  # link modules through their imports in trees of up to this many MB of modules (0: never)

    @property
    def excludes(self) -> list[str]:
        return [*self.exclude, *self.extend_exclude]


def _strings(key: str, value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"`{key}` must be a list of strings, got {value!r}")
    return value


def _codes(key: str, value: Any) -> list[str]:
    codes = [c.strip().upper() for c in _strings(key, value)]
    bad = unknown_codes(codes)
    if bad:
        raise ConfigError(f"`{key}` names unknown rule {bad[0]!r} (see `chatbound rules`)")
    return codes


def _positive_int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"`{key}` must be a positive integer, got {value!r}")
    return value


def _severity(key: str, value: Any) -> Severity:
    try:
        return Severity.parse(str(value))
    except ValueError as exc:
        raise ConfigError(f"`{key}`: {exc}") from None


def _per_file_ignores(key: str, value: Any) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        raise ConfigError(f"`{key}` must be a table of glob = [rule ids], got {value!r}")
    return {glob: _codes(f"{key}.{glob}", codes) for glob, codes in value.items()}


def _options(key: str, value: Any) -> dict[str, Any]:
    """A table; its names and values are checked against the rules by `check_options`."""
    if not isinstance(value, dict):
        raise ConfigError(f"`{key}` must be a table, got {value!r}")
    return dict(value)


def check_options(settings: Settings) -> None:
    """The `options` table against the options the rules declare. It needs the rules (and so
    LibCST) loaded: `load_settings` checks it unless told not to, and a run checks it when a
    file is not in the cache (a run served from the cache has the options of the run that
    filled it, which checked them)."""
    if not settings.options:
        return
    declared = {name: option for rule in all_rules() for name, option in rule.OPTIONS.items()}
    try:
        for name, item in settings.options.items():
            option = declared.get(name)
            if option is None:
                known = ", ".join(sorted(declared)) or "none"
                raise ConfigError(f"unknown key `options.{name}` (known rule options: {known})")
            if option.type is int:
                _positive_int(f"options.{name}", item)
            elif not isinstance(item, option.type):
                raise ConfigError(f"`options.{name}` must be {option.type.__name__}, got {item!r}")
    except ConfigError as exc:
        raise ConfigError(f"{settings.config_path}: {exc}" if settings.config_path else str(exc)) from None


def _megabytes(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"`{key}` must be a whole number of megabytes, 0 or more, got {value!r}")
    return value


def _bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"`{key}` must be true or false, got {value!r}")
    return value


def _string(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"`{key}` must be a non-empty string, got {value!r}")
    return value


KEYS = {
    "select": ("select", _codes),
    "ignore": ("ignore", _codes),
    "exclude": ("exclude", _strings),
    "extend-exclude": ("extend_exclude", _strings),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "fail-on": ("fail_on", _severity),
    "encoding": ("encoding", _string),
    "turn-tokens": ("turn_tokens", _positive_int),
    "options": ("options", _options),
    "notebooks": ("notebooks", _bool),
    "project-max-mb": ("project_max_mb", _megabytes),
}


def settings_from_table(table: dict[str, Any], root: Path, config_path: Path | None) -> Settings:
    settings = Settings(root=root, config_path=config_path)
    for key, value in table.items():
        if key not in KEYS:
            raise ConfigError(f"unknown key `{key}` in [tool.chatbound] (known: {', '.join(KEYS)})")
        attr, check = KEYS[key]
        setattr(settings, attr, check(key, value))
    return settings


def read_table(path: Path) -> dict[str, Any] | None:
    """The `[tool.chatbound]` table of a pyproject.toml, or None when it has none."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {' '.join(str(exc).split())}") from None
    if path.name == "pyproject.toml":
        return data.get("tool", {}).get("chatbound")
    return data.get("tool", {}).get("chatbound", data)


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.chatbound] table, walking up from `start`."""
    start = start.resolve()
    for directory in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and read_table(candidate) is not None:
            return candidate
    return None


def load_settings(paths: list[Path], config: Path | None = None, options: bool = True) -> Settings:
    """Settings from `--config FILE`, else from the pyproject.toml above the checked paths;
    `options=False` leaves the rule options to be checked by the run (`check_options`)."""
    if config is not None:
        if not config.is_file():
            raise ConfigError(f"config file {config} does not exist")
        path = config
    else:
        path = find_config(paths[0] if paths else Path.cwd())
        if path is None:
            return Settings()
    try:
        settings = settings_from_table(read_table(path) or {}, path.resolve().parent, path)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if options:
        check_options(settings)
    return settings
