"""The scenario channel: what a scenario run adds to a prompt, kept off ordinary prompts.

docs/scenarios.md. A scenario replaces the model with a script, replaces
tools with fixtures that report scripted outcomes, and pauses chosen batches so its driver
can land an event inside exactly that batch. All of it travels in one optional field,
``PromptInput.scenario`` (``SessionSettings.scenario`` for a session), and in the matching
``scenario_*`` fields of the activity inputs; an ordinary prompt leaves them ``None``.

Payloads recorded before the channel existed carried the same data as top-level
``fixture_tools``/``pause_at_batches`` keys and as ``model: {"provider": "scripted",
"script": ...}``; :func:`lift_legacy_prompt_keys` and its siblings move those keys into
their new place, so old histories and in-flight payloads still decode.

So a production payload carries no fixture, no script and no pause list, and
``ModelSpec.provider`` has no scripted provider at all (``operator``, ``demo`` or ``openai``):
the model activity answers a request that carries a script with its own fixed scripted
provider, and every other request with the provider the spec names. The workflow's driver
handlers (``release_batch``, ``wait_for_driver``) stay registered because recorded histories
use them, but are inert unless the scenario asks for pauses. A scripted session runs tools the
client chose, so the gateway accepts one (``model_script`` on ``POST /v1/sessions``) only when
started with ``SEAWALL_ALLOW_SCRIPTED_MODELS=1``, and the worker runs one only with its own
``allow_scripted_models`` (docs/security-trust.md).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- the scripted model -----------------------------------------------------------------


class ScriptedCall(_Strict):
    """A tool call a scripted model emits. ``arguments`` given as a string is sent as raw
    argument text, so a script can reproduce a model's broken JSON."""

    name: str | None = None
    arguments: dict[str, Any] | str | None = Field(default_factory=dict)
    id: str | None = None


class ScriptedTurn(_Strict):
    """One scripted reply. ``latency_seconds`` is how long the model is scripted to take to
    give it: the prompt's clock advances by it (docs/scenarios.md, "Time")."""

    text: str = ""
    tool_calls: list[ScriptedCall] = Field(default_factory=list)
    latency_seconds: float = Field(default=0.0, ge=0)


# A progress judge's verdict, as a script gives it (``JudgeVerdict`` in
# workflows/contracts/activity.py has the same values).
JudgeVerdictName = Literal["progress", "no_progress", "unknown"]


class ModelScript(_Strict):
    """A scripted model: the reply to each request in order. Once a reminder was
    delivered, ``after_reminder`` replies are used instead (when given). ``judge`` answers
    the progress judge's requests in order (docs/protections.md, "The progress judge"); a
    request past its end is answered ``unknown``."""

    turns: list[ScriptedTurn] = Field(default_factory=list)
    after_reminder: list[ScriptedTurn] | None = None
    judge: list[JudgeVerdictName] = Field(default_factory=list)


# --- fixture tools ----------------------------------------------------------------------


class FixtureOutcome(_Strict):
    """A scripted tool outcome. Any contract field may be set, including a missing
    (``None``) or never-seen execution status and contract-violating pairs. ``error_type``
    also sets the frozen ``execution_error_type`` unless that is given; ``hang`` makes the
    call run until it is cancelled. ``duration_seconds`` is how long the call is scripted
    to take (the prompt's clock advances by it; docs/scenarios.md, "Time"); ``writes`` the
    files a successful call leaves behind, path to its whole content after the call
    (``None``: deleted), reported as private digests exactly as a built-in file tool
    reports what it changed (``ToolOutcome.writes``)."""

    status: str = "success"
    execution_status: str | None = None
    error_type: str | None = None
    execution_error_type: str | None = None
    message: str | None = None
    content: str | None = None
    hang: bool = False
    duration_seconds: float = Field(default=0.0, ge=0)
    writes: dict[str, str | None] = Field(default_factory=dict)


class FixtureTool(_Strict):
    """A tool whose outcomes a scenario scripts: used in order, the last one repeats. A
    fixture replaces a built-in tool of the same name."""

    outcomes: list[FixtureOutcome] = Field(min_length=1)
    description: str = "A scenario fixture tool."
    mutating: bool = False
    tool_type: Literal["native", "mcp"] = "native"

    def outcome_for(self, ordinal: int) -> FixtureOutcome:
        """The outcome of this tool's call number ``ordinal`` (0-based) in the prompt."""
        return self.outcomes[min(max(ordinal, 0), len(self.outcomes) - 1)]


# --- the hooks a prompt carries ---------------------------------------------------------


class ScenarioHooks(_Strict):
    """Everything a scenario run adds to a prompt (``PromptInput.scenario``)."""

    # Answers every model request instead of the prompt's provider.
    model_script: ModelScript | None = None
    # Tools by name; a fixture replaces a built-in of the same name.
    fixture_tools: dict[str, FixtureTool] = Field(default_factory=dict)
    # Hold the workflow once batch N's calls settled (all but those scripted to hang) until
    # a ``release_batch`` signal, so the driver can land an event inside exactly that batch.
    pause_at_batches: list[int] = Field(default_factory=list)

    def pauses_at(self, batch: int) -> bool:
        return batch in self.pause_at_batches

    def listed_fixtures(self) -> dict[str, FixtureTool]:
        """The fixtures as the tool listing needs them: what the model is offered, their first
        outcome only (a fixture needs one). The listing's input is encoded (and, past the
        threshold, stored) though no history records it: a long scenario's scripted outcomes
        stay in its start input alone."""
        return {
            name: fixture.model_copy(update={"outcomes": fixture.outcomes[:1]})
            for name, fixture in self.fixture_tools.items()
        }

    def scripted_to_hang(self, tool_name: str, ordinal: int) -> bool:
        """Whether call number ``ordinal`` of ``tool_name`` is a fixture scripted to hang."""
        fixture = self.fixture_tools.get(tool_name)
        return fixture is not None and fixture.outcome_for(ordinal).hang

    def scripted_duration(self, tool_name: str, ordinal: int) -> float | None:
        """The seconds call number ``ordinal`` of ``tool_name`` is scripted to take, or
        ``None`` when the tool is not a fixture (docs/scenarios.md, "Time")."""
        fixture = self.fixture_tools.get(tool_name)
        return None if fixture is None else fixture.outcome_for(ordinal).duration_seconds


# --- payloads from before the channel existed -------------------------------------------

_LEGACY_SCRIPTED_PROVIDER = "scripted"


def _lift_legacy_model(data: dict[str, Any]) -> Any:
    """Drop a legacy ``model.script`` (every old payload serialized one) and return it when
    the old ``scripted`` provider, then the default, was the one answering; else ``None``."""
    model = data.get("model")
    if not isinstance(model, dict):
        return None
    if "script" not in model and model.get("provider") != _LEGACY_SCRIPTED_PROVIDER:
        return None
    model = dict(model)
    script = model.pop("script", None)
    provider = model.pop("provider", _LEGACY_SCRIPTED_PROVIDER)
    if provider != _LEGACY_SCRIPTED_PROVIDER:
        model["provider"] = provider
    data["model"] = model
    if provider != _LEGACY_SCRIPTED_PROVIDER:
        return None
    return script if script is not None else {}


def lift_legacy_prompt_keys(data: Any) -> Any:
    """Move a legacy prompt or session payload's scenario keys into ``scenario``.

    ``fixture_tools`` and ``pause_at_batches`` were top-level keys of ``PromptInput``, and a
    scripted model was ``model: {"provider": "scripted", "script": ...}``. Empty legacy
    keys of an ordinary prompt leave ``scenario`` unset.
    """
    if not isinstance(data, dict):
        return data
    data = dict(data)
    hooks: dict[str, Any] = {}
    script = _lift_legacy_model(data)
    if script is not None:
        hooks["model_script"] = script
    for key in ("fixture_tools", "pause_at_batches"):
        value = data.pop(key, None)
        if value:
            hooks[key] = value
    if not hooks:
        return data
    existing = data.get("scenario")
    if isinstance(existing, dict):
        hooks = {**hooks, **existing}
    elif isinstance(existing, ScenarioHooks):
        hooks = {**hooks, **existing.model_dump(exclude_unset=True)}
    data["scenario"] = hooks
    return data


def lift_legacy_model_input(data: Any) -> Any:
    """A legacy model activity input: ``model.script`` of the ``scripted`` provider becomes
    ``scenario_script``."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    script = _lift_legacy_model(data)
    if script is not None and data.get("scenario_script") is None:
        data["scenario_script"] = script
    return data


def lift_legacy_key(data: Any, old: str, new: str) -> Any:
    """A legacy activity input whose scenario field was called ``old``."""
    if not isinstance(data, dict) or old not in data:
        return data
    data = dict(data)
    value = data.pop(old)
    if value and data.get(new) is None:
        data[new] = value
    return data
