"""The one reader of the settings' sources: the process environment, then the operator's
user config directory, then the default (docs/settings.md, "Where a value comes from").

Startup (:meth:`Load.read`, whose values the settings model validates) and the session-time
reads (session.py) both find a setting's raw value with :func:`find`, so they read the same
variable, key and file in the same order. Nothing else is ever read: not a project ``.env``,
not ``.seawall/``, not ``.qwen/.env``, not workspace settings, not a secrets directory,
nothing relative to the working directory — whoever wrote a repository must not be able to
switch the guard off, point the worker at another server, make it spawn commands or read its
keys. Nor does a process keep what it does not read (docs/settings.md, "Each process reads
its own settings"): a :class:`UserConfig` holds the values of the keys its reader reads
only, and ``mcp.json`` is opened only by a process that reads the MCP servers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from workflows.contracts.activity import SettingSource
from workflows.rules import LoopProfile
from workflows.seed import GuardMode

from .fields import (
    CONFIG_DIR_NAME,
    CONFIG_FILE_NAME,
    GUARD_MODE_CONFIG_KEY,
    LOOP_PROFILE_CONFIG_KEY,
    MCP_FILE_NAME,
    Diagnostic,
    Origin,
    Readers,
    Setting,
)

DEFAULT_GUARD_MODE = GuardMode.SHADOW
# The event of the seed profile's notice for an invalid guard mode (:func:`seed_guard_notice`),
# the one the worker logs at each session that resolves such a value.
GUARD_NOTICE = "invalid_guard_mode"


def user_config_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/seawall``, else ``~/.config/seawall`` (``HOME`` from ``environ``)."""
    xdg = environ.get("XDG_CONFIG_HOME", "").strip()
    # The XDG spec says a relative value is invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / CONFIG_DIR_NAME
    home = environ.get("HOME", "").strip()
    base = Path(home) if home else Path.home()
    return base / ".config" / CONFIG_DIR_NAME


def user_data_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME/seawall``, else ``~/.local/share/seawall``: the per-user data
    directory (``seawall acp --embedded`` keeps its Temporal state there when ``data_dir``
    is unset)."""
    xdg = environ.get("XDG_DATA_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / CONFIG_DIR_NAME
    home = environ.get("HOME", "").strip()
    base = Path(home) if home else Path.home()
    return base / ".local" / "share" / CONFIG_DIR_NAME


def user_config_path(environ: Mapping[str, str]) -> Path:
    """``config.yaml`` in :func:`user_config_dir`."""
    return user_config_dir(environ) / CONFIG_FILE_NAME


@dataclass(frozen=True)
class UserConfig:
    """A file of the operator's user config directory as read once; a broken file has no
    values and a diagnostic. ``values`` holds only the keys the reader asked for (``keep``);
    ``keys`` names every key of the file, for the diagnostics of keys that set nothing."""

    path: Path | None
    values: Mapping[str, Any] = field(default_factory=dict)
    found: bool = False
    problem: Diagnostic | None = None
    # The whole document, for files that hold one setting (mcp.json).
    document: Any = None
    keys: tuple[str, ...] = ()

    @classmethod
    def read(cls, path: Path | None, keep: Callable[[str], bool] | None = None) -> UserConfig:
        """``config.yaml``: a YAML mapping of setting names to values, of which only the
        keys ``keep`` accepts (default: all) keep their values. The others' one-line values
        are blanked in the bytes read from the file before anything parses or copies them
        (:func:`withheld_text`), so a key or token this process does not read never becomes
        one of its strings."""
        if keep is None:
            return cls._read(path, "is not valid YAML", _load_yaml, mapping=True)
        read = cls._read(
            path, "is not valid YAML", _load_yaml, mapping=True, text_of=withheld_text(keep)
        )
        if not read.values:
            return read
        return cls(
            path=read.path,
            values={k: v for k, v in read.values.items() if keep(k)},
            found=read.found,
            keys=read.keys,
        )

    @classmethod
    def read_json(cls, path: Path | None) -> UserConfig:
        """A JSON document (``mcp.json``), kept whole in ``document``."""
        return cls._read(path, "is not valid JSON", json.loads, mapping=False)

    @classmethod
    def _read(
        cls,
        path: Path | None,
        invalid: str,
        parse: Callable[[str], Any],
        *,
        mapping: bool,
        text_of: Callable[[Path], str] = lambda path: path.read_text(encoding="utf-8"),
    ) -> UserConfig:
        if path is None:
            return cls(path=None)
        source = f"user config {path}"

        def broken(reason: str) -> UserConfig:
            return cls(
                path=path,
                found=True,
                problem=Diagnostic(
                    event="invalid_operator_config",
                    source=source,
                    message=f"{source}: {reason}; ignoring it",
                ),
            )

        try:
            text = text_of(path)
        except FileNotFoundError:
            return cls(path=path)
        except (OSError, UnicodeDecodeError) as exc:
            return broken(f"cannot be read ({type(exc).__name__})")
        try:
            data = parse(text)
        except ValueError:
            return broken(invalid)
        if not mapping:
            return cls(path=path, found=True, document=data)
        if data is None:
            return cls(path=path, found=True)
        if not isinstance(data, dict):
            return broken("must be a YAML mapping")
        values = {str(k): v for k, v in data.items()}
        return cls(path=path, values=values, found=True, keys=tuple(values))

    def get(self, key: str) -> Any:
        """The configured value, or ``None`` when unset or blank."""
        value = self.values.get(key)
        if isinstance(value, str) and not value.strip():
            return None
        return value

    def where(self, key: str) -> str:
        return f"{self.path} key {key}"


# A top-level key of a block mapping, at the start of a line: plain, or quoted.
_TOP_LEVEL_KEY = re.compile(
    rb"""^(?:"([^"\r\n]*)"|'([^'\r\n]*)'|([A-Za-z0-9_][A-Za-z0-9_.-]*))[ \t]*:(?=[ \t\r\n]|$)""",
    re.MULTILINE,
)
# A value the rest of its key's line holds whole, and whose blanking cannot hide a mistake
# of the file's: nothing, a plain scalar (no ``: ``, not starting with an indicator), or a
# quoted one closed on that line (known escapes only), then perhaps a comment.
_ONE_LINE_VALUE = re.compile(
    rb"""[ \t]*(?:"""
    rb""""(?:[^"\\\r\n]|\\[0abtnvfre "/\\N_LPxuU\t])*"|"""
    rb"""'(?:[^'\r\n]|'')*'|"""
    rb"""(?:[A-Za-z0-9_./+~=$^(<;]|-(?=[^ \t\r\n]))"""
    rb"""(?:[^\r\n:#]|:(?=[^ \t\r\n])|(?<=[^ \t])#)*"""
    rb""")?[ \t]*(?:#[^\r\n]*)?\r?"""
)
# The rest of the file after such a line: blank lines, then the next top-level line (or the
# end); an indented line would continue the value, and ``- item`` would make it a list.
_THEN_TOP_LEVEL = re.compile(rb"(?:\n[ \t\r]*(?=\n))*(?:\n(?=[^ \t\r\n-]|-[^ \t\r\n])|\n?$)")


def withheld_text(keep: Callable[[str], bool]) -> Callable[[Path], str]:
    """A reader of ``config.yaml`` that blanks, in the one buffer the file is read into,
    the value of every top-level key ``keep`` refuses when that value is one line (as any
    key or token is written: ``openai_api_key: sk-…``), then decodes it; ``key:`` stays,
    so a key that sets nothing is still reported. The kernel's read into that buffer is the
    only copy of those bytes this process makes: the text, the YAML parser's strings and
    everything after never see the values. A value written otherwise (a block or flow
    collection, a block scalar, quotes across lines) is parsed, and dropped after."""

    def text_of(path: Path) -> str:
        with (
            open(path, "rb", buffering=0) as file,
            memoryview(bytearray(os.fstat(file.fileno()).st_size + 1)) as view,
        ):
            size = 0
            while size < len(view) and (count := file.readinto(view[size:])):
                size += count
            if size == len(view):  # the file grew while it was read: read it whole
                return path.read_text(encoding="utf-8")
            buffer = view.obj
        assert isinstance(buffer, bytearray)
        del buffer[size:]
        for key in list(_TOP_LEVEL_KEY.finditer(buffer)):
            name = next(g for g in key.groups() if g is not None)
            if keep(name.decode("utf-8", "replace")):
                continue
            value = _ONE_LINE_VALUE.match(buffer, key.end())
            line_end = buffer.find(b"\n", key.end())
            line_end = len(buffer) if line_end < 0 else line_end
            if value is None or value.end() != line_end:
                continue
            if not _THEN_TOP_LEVEL.match(buffer, line_end):
                continue
            for at in range(key.end(), line_end):
                if buffer[at] != ord("\r"):
                    buffer[at] = ord(" ")
        return buffer.decode("utf-8")

    return text_of


def _load_yaml(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError("not YAML") from exc


def from_environment(setting: Setting, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """``(variable, value)`` of the first non-blank variable of ``setting``."""
    for name in setting.env:
        value = environ.get(name, "")
        if value.strip():
            return name, value
    return None


@dataclass(frozen=True)
class Found:
    """A setting's raw value as its source holds it, where it came from, and how a
    diagnostic names that place (``environment VARIABLE``, ``user config PATH key KEY``)."""

    value: Any
    origin: Origin
    label: str

    @property
    def text(self) -> str:
        """The raw value as text, for a diagnostic."""
        return self.value if isinstance(self.value, str) else str(self.value)

    @property
    def word(self) -> str:
        """A mode or profile word as found, for a diagnostic (YAML's bare ``off`` is false)."""
        return "off" if self.value is False else self.text

    def rejected(
        self, event: str, what: str, expected: str, instead: str, shown: str
    ) -> Diagnostic:
        """The diagnostic of a value a session's start does not use:
        ``LABEL: invalid WHAT 'VALUE' (expected EXPECTED); INSTEAD``."""
        return Diagnostic(
            event=event,
            source=self.label,
            value=shown,
            message=(
                f"{self.label}: invalid {what} {shown[:100]!r} (expected {expected}); {instead}"
            ),
        )


def find(
    setting: Setting, environ: Mapping[str, str], config: UserConfig, mcp: UserConfig | None = None
) -> Found | None:
    """The raw value of ``setting``: its first non-blank variable, else its key of the file
    it belongs in (a broken file counting as unset), else ``None`` (the default applies)."""
    found = from_environment(setting, environ)
    if found is not None:
        name, value = found
        return Found(value, Origin(SettingSource.ENVIRONMENT, name), f"environment {name}")
    if setting.config_file == CONFIG_FILE_NAME and config.problem is None:
        configured = config.get(setting.name)
        if configured is not None:
            where = config.where(setting.name)
            return Found(
                configured, Origin(SettingSource.USER_CONFIG, where), f"user config {where}"
            )
    if (
        setting.config_file == MCP_FILE_NAME
        and mcp is not None
        and mcp.found
        and mcp.problem is None
    ):
        where = str(mcp.path)
        return Found(mcp.document, Origin(SettingSource.USER_CONFIG, where), f"user config {where}")
    return None


# --- the guard mode at a session's start: never an error ------------------------------------


@dataclass(frozen=True)
class GuardModeResolution:
    """The guard mode, where it came from, and why a configured value was rejected."""

    mode: GuardMode
    source: SettingSource
    diagnostic: Diagnostic | None = None
    where: str | None = None


def read_guard_mode(
    setting: Setting, validator: TypeAdapter[Any], environ: Mapping[str, str], config: UserConfig
) -> GuardModeResolution:
    """The guard mode with its operator semantics: missing means ``shadow``; the first
    non-blank value decides, and an invalid one (or an unreadable config file) means
    ``shadow`` plus a diagnostic — it does not fall through to a lower-priority source.
    ``validator`` is the guard field's own (:func:`~.fields.field_validator_of`)."""
    found = find(setting, environ, config)
    if found is None:
        if config.problem is not None:
            return GuardModeResolution(DEFAULT_GUARD_MODE, SettingSource.DEFAULT, config.problem)
        return GuardModeResolution(DEFAULT_GUARD_MODE, SettingSource.DEFAULT)
    try:
        mode = validator.validate_python(found.value)
    except ValidationError:
        allowed = ", ".join(m.value for m in GuardMode)
        return GuardModeResolution(
            DEFAULT_GUARD_MODE,
            SettingSource.DEFAULT,
            found.rejected(
                "invalid_guard_mode",
                "repeated tool failure guard mode",
                f"one of: {allowed}",
                f"using {DEFAULT_GUARD_MODE.value}",
                found.word,
            ),
        )
    return GuardModeResolution(mode, found.origin.source, where=found.origin.where)


# --- the seed profile's guard mode at startup -----------------------------------------------


def seed_guard_notice(found: Found) -> Diagnostic:
    """What startup says when the seed profile runs an invalid guard mode as shadow: one
    line naming the setting, the value and the accepted words (docs/settings.md, "Bad
    values")."""
    word = found.word
    shown = json.dumps(word if len(word) <= 80 else word[:79] + "…", ensure_ascii=False)
    allowed = ", ".join(m.value for m in GuardMode)
    return Diagnostic(
        event=GUARD_NOTICE,
        source=found.label,
        value=word,
        message=(
            f"{GUARD_MODE_CONFIG_KEY}: {shown} is not a mode ({allowed}); "
            f"running {DEFAULT_GUARD_MODE.value} as the seed design requires"
        ),
    )


def _validates(validator: TypeAdapter[Any], value: Any) -> Any | None:
    """``value`` as ``validator`` reads it, or ``None`` when it does not validate."""
    try:
        return validator.validate_python(value)
    except ValidationError:
        return None


# --- what one load reads ----------------------------------------------------------------------


@dataclass
class Load:
    """What one load of the settings reads (``readers``' settings only), and what it found."""

    environ: Mapping[str, str]
    config: UserConfig
    mcp: UserConfig
    readers: Readers
    origins: dict[str, Origin] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    # Set when the seed profile runs an invalid guard mode as shadow (seed_guard_notice).
    guard_notice: Diagnostic | None = None

    @classmethod
    def of(
        cls,
        environ: Mapping[str, str],
        settings: Iterable[Setting],
        readers: Readers,
        config_path: Path | None = None,
    ) -> Load:
        """The sources of ``readers``: ``config.yaml`` keeping the values of the keys they
        read, and ``mcp.json`` only when they read the MCP servers."""
        read = [s for s in settings if readers.reads(s)]
        names = {s.name for s in read}
        path = user_config_path(environ) if config_path is None else config_path
        mcp_path = path.with_name(MCP_FILE_NAME)
        reads_mcp = any(s.config_file == MCP_FILE_NAME for s in read)
        return cls(
            environ=environ,
            config=UserConfig.read(path, names.__contains__),
            mcp=UserConfig.read_json(mcp_path) if reads_mcp else UserConfig(path=mcp_path),
            readers=readers,
        )

    def read(
        self, settings: Iterable[Setting], validator_of: Callable[[str], TypeAdapter[Any]]
    ) -> dict[str, Any]:
        """The raw value of each of ``settings`` its readers read, recording where each came
        from (a default has no raw value). The seed profile keeps the seed design's semantics
        for the guard mode: an invalid value runs ``shadow``, loudly (``guard_notice``);
        under any other profile it stays, and the model refuses it like any bad value.
        ``validator_of`` is the catalogue's (each setting's field validator)."""
        guard: Found | None = None
        for setting in settings:
            if not self.readers.reads(setting):
                continue
            name = setting.name
            found = find(setting, self.environ, self.config, self.mcp)
            if found is None:
                self.origins[name] = Origin(SettingSource.DEFAULT)
                continue
            self.raw[name] = found.value
            self.origins[name] = found.origin
            if name == GUARD_MODE_CONFIG_KEY:
                guard = found
        profile = self.raw.get(LOOP_PROFILE_CONFIG_KEY)
        seed = _validates(validator_of(LOOP_PROFILE_CONFIG_KEY), profile) is LoopProfile.SEED
        invalid = (
            guard is not None
            and _validates(validator_of(GUARD_MODE_CONFIG_KEY), guard.value) is None
        )
        if guard is not None and seed and invalid:
            self.raw[GUARD_MODE_CONFIG_KEY] = DEFAULT_GUARD_MODE
            self.guard_notice = seed_guard_notice(guard)
        return dict(self.raw)
