"""The catalogue: every setting, its type with its one validator, its default and its readers.

:class:`SeawallSettings` is the one settings model of every Seawall process (docs/settings.md
lists its fields). Each field's whole validation is in its type — the constraints, and the
``Annotated`` validators of value_types.py — so the session-time reads (session.py) validate a value
through the very same field (:func:`~.fields.field_validator_of`) and startup and a
session's start can never disagree. Only the two checks that compare settings
(``payload_storage_bucket`` needs ``payload_storage``; ``guard_rollout`` needs its salt and
environment) are validators beside the fields.

The per-rule mode settings of the recommended loop profile are declared in one place,
rule_modes.py, with one field each in the marked block of the model.

A field's ``read_by`` decides which processes load it (loading.py): a model loaded for the
gateway has no value for a setting only the worker reads, and asking it for one is an
error naming the setting and its readers, never a silent default.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    SecretStr,
    TypeAdapter,
    ValidationInfo,
    field_validator,
)

from seawall.runtime.rollout_policy import check_rollout, deployment_environment
from seawall.runtime.storage import DEFAULT_THRESHOLD_BYTES
from workflows.contracts.conversation import DEFAULT_CONTEXT_BUDGET_CHARS, MIN_CONTEXT_BUDGET_CHARS
from workflows.contracts.editor_calls import EditorTools
from workflows.contracts.prompt_options import (
    DEFAULT_MODEL_RETRY_WINDOW_SECONDS,
    DEFAULT_PERMISSION_TIMEOUT_SECONDS,
    MAX_MODEL_RETRY_WINDOW_SECONDS,
    MIN_MODEL_RETRY_WINDOW_SECONDS,
    ApprovalMode,
)
from workflows.contracts.session import MAX_PROMPT_CHARS
from workflows.rules import DEFAULT_LOOP_PROFILE
from workflows.rules.stale_waits import STALE_WAIT_MINUTES
from workflows.seed.guard import GuardMode

from .fields import (
    ACP,
    GATEWAY,
    GUARD_MODE_ENV,
    GUARD_MODE_ENV_ALIAS,
    MCP_FILE_NAME,
    PROMPT,
    ROLLOUT,
    RUN,
    STORAGE,
    TEMPORAL_CLIENTS,
    UP,
    WORKER,
    Readers,
    Setting,
    field_validator_of,
    setting,
    setting_of,
)
from .rule_modes import rule_mode_setting
from .sandbox_limits import sandbox_limit_setting
from .sources import DEFAULT_GUARD_MODE
from .value_types import (
    ApprovalRulesFile,
    HttpUrl,
    LogFormat,
    LogLevel,
    Lowered,
    McpServers,
    ModeWord,
    OnOffWord,
    Origins,
    OwnerId,
    OwnerList,
    OwnerTokensFile,
    ProfileWord,
    RuleModeWord,
    StorageKind,
    UserPath,
    VariableNames,
)

LOOP_PROFILE_ENV = "SEAWALL_LOOP_PROFILE"
PROGRESS_JUDGE_CONFIG_KEY = "progress_judge"
STALE_WAIT_MINUTES_CONFIG_KEY = "stale_wait_minutes"
PROGRESS_JUDGE_ENV = "SEAWALL_PROGRESS_JUDGE"


# The dev server's UI as a browser opens it (seawall up's default ui_port).
DEFAULT_CODEC_UI_ORIGINS = "http://localhost:8233,http://127.0.0.1:8233"


# --- the model --------------------------------------------------------------------------------


class SeawallSettings(BaseModel):
    """The effective settings of one process. Build it with :func:`~.loading.load_settings`
    (which reads the sources, says where each value came from and keeps only the settings
    the process reads); docs/settings.md describes every field. Constructed directly it
    holds the defaults: it reads nothing itself."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        validate_default=True,
        str_strip_whitespace=True,
        coerce_numbers_to_str=True,
        allow_inf_nan=False,
    )
    # Whose settings these are (loading.py); every setting's when built directly.
    _readers: Readers = PrivateAttr(default=Readers(None))

    # --- Temporal ---------------------------------------------------------------------------
    temporal_address: str = setting(
        "localhost:7233",
        "Temporal frontend host:port (seawall run: when unset, an embedded dev server)",
        env="TEMPORAL_ADDRESS",
        read_by=(WORKER, GATEWAY, RUN, ACP, ROLLOUT, STORAGE),
        min_length=1,
    )
    temporal_namespace: str = setting(
        "default",
        "Temporal namespace",
        env="TEMPORAL_NAMESPACE",
        read_by=(WORKER, GATEWAY, RUN, UP, ACP, ROLLOUT, STORAGE),
        min_length=1,
    )
    task_queue: str = setting(
        "seawall",
        "task queue of the prompt and session workflows",
        env="SEAWALL_TASK_QUEUE",
        read_by=(WORKER, GATEWAY, RUN, UP, ACP),
        min_length=1,
    )
    connect_timeout_seconds: float = setting(
        300.0,
        "how long the worker and the gateway wait, retrying with backoff, for the Temporal "
        "server at start-up (0: for ever)",
        env="SEAWALL_CONNECT_TIMEOUT_SECONDS",
        read_by=(WORKER, GATEWAY),
        ge=0,
    )
    # --- Temporal access: TLS, mTLS, API keys (docs/settings.md, "Temporal access") ---------
    # The variables are the Temporal SDKs' own environment configuration; the profile file
    # is theirs too (temporalio.envconfig). seawall/runtime/temporal_connect.py builds every
    # client's connect arguments from these, over the profile, over the defaults above.
    temporal_profile: str | None = setting(
        None,
        "profile of the Temporal config file to use (unset: its 'default' profile, if any)",
        env="TEMPORAL_PROFILE",
        read_by=TEMPORAL_CLIENTS,
        min_length=1,
    )
    temporal_config_file: Path | None = setting(
        None,
        "Temporal client config file (TOML profiles; unset: "
        "$XDG_CONFIG_HOME/temporalio/temporal.toml or ~/.config/temporalio/temporal.toml "
        "when it exists)",
        env="TEMPORAL_CONFIG_FILE",
        read_by=TEMPORAL_CLIENTS,
    )
    temporal_api_key: SecretStr | None = setting(
        None,
        "API key sent to the Temporal frontend (Temporal Cloud); turns TLS on",
        env="TEMPORAL_API_KEY",
        read_by=TEMPORAL_CLIENTS,
        secret=True,
    )
    temporal_tls: bool | None = setting(
        None,
        "TLS to the Temporal frontend: true | false (unset: on when an API key or a TLS file "
        "is set)",
        env="TEMPORAL_TLS",
        read_by=TEMPORAL_CLIENTS,
    )
    temporal_tls_server_ca_cert_path: Path | None = setting(
        None,
        "PEM file of the CA that signed the frontend's certificate (unset: system roots)",
        env="TEMPORAL_TLS_SERVER_CA_CERT_PATH",
        read_by=TEMPORAL_CLIENTS,
    )
    temporal_tls_server_ca_cert_data: SecretStr | None = setting(
        None,
        "the same CA certificate as PEM text (environment only)",
        env="TEMPORAL_TLS_SERVER_CA_CERT_DATA",
        read_by=TEMPORAL_CLIENTS,
        secret=True,
        config_file=None,
    )
    temporal_tls_client_cert_path: Path | None = setting(
        None,
        "PEM file of this client's certificate, for mTLS (with the client key)",
        env="TEMPORAL_TLS_CLIENT_CERT_PATH",
        read_by=TEMPORAL_CLIENTS,
    )
    temporal_tls_client_cert_data: SecretStr | None = setting(
        None,
        "the client certificate as PEM text (environment only)",
        env="TEMPORAL_TLS_CLIENT_CERT_DATA",
        read_by=TEMPORAL_CLIENTS,
        secret=True,
        config_file=None,
    )
    temporal_tls_client_key_path: Path | None = setting(
        None,
        "PEM file of this client's private key, for mTLS (with the client certificate)",
        env="TEMPORAL_TLS_CLIENT_KEY_PATH",
        read_by=TEMPORAL_CLIENTS,
        secret_file=True,
    )
    temporal_tls_client_key_data: SecretStr | None = setting(
        None,
        "the client private key as PEM text (environment only)",
        env="TEMPORAL_TLS_CLIENT_KEY_DATA",
        read_by=TEMPORAL_CLIENTS,
        secret=True,
        config_file=None,
    )
    temporal_tls_server_name: str | None = setting(
        None,
        "name the frontend's certificate must carry, when it is not the address's host (SNI)",
        env="TEMPORAL_TLS_SERVER_NAME",
        read_by=TEMPORAL_CLIENTS,
        min_length=1,
    )
    # --- the guard and the worker -----------------------------------------------------------
    repeated_tool_failure_guard: ModeWord = setting(
        DEFAULT_GUARD_MODE,
        "repeated tool failure guard: off | shadow | warn | enforce (read once per session)",
        env=(GUARD_MODE_ENV, GUARD_MODE_ENV_ALIAS),
        read_by=(WORKER,),
    )
    loop_profile: ProfileWord = setting(
        DEFAULT_LOOP_PROFILE,
        "loop profile: recommended | seed (the seeds' rules verbatim; read once per session)",
        env=LOOP_PROFILE_ENV,
        read_by=(WORKER,),
    )
    # --- per-rule modes: one field per row of RULE_MODE_SETTINGS (rule_modes.py) ----------
    failure_cycle_guard: RuleModeWord = rule_mode_setting("failure_cycle_guard")
    identical_result_guard: RuleModeWord = rule_mode_setting("identical_result_guard")
    denied_call_guard: RuleModeWord = rule_mode_setting("denied_call_guard")
    call_cycle_guard: RuleModeWord = rule_mode_setting("call_cycle_guard")
    verification_guard: RuleModeWord = rule_mode_setting("verification_guard")
    workspace_revisit_guard: RuleModeWord = rule_mode_setting("workspace_revisit_guard")
    reformulation_guard: RuleModeWord = rule_mode_setting("reformulation_guard")
    near_repeat_guard: RuleModeWord = rule_mode_setting("near_repeat_guard")
    rewrite_guard: RuleModeWord = rule_mode_setting("rewrite_guard")
    stagnation_guard: RuleModeWord = rule_mode_setting("stagnation_guard")
    stale_wait_guard: RuleModeWord = rule_mode_setting("stale_wait_guard")
    # --- (end of the per-rule modes) ------------------------------------------------------
    progress_judge: ModeWord = setting(
        GuardMode.OFF,
        "progress judge of the recommended profile: off | shadow | warn | enforce (asks the "
        "operator's model about a stale stretch, at most 3 times per prompt; read once per "
        "session)",
        env=PROGRESS_JUDGE_ENV,
        read_by=(WORKER,),
    )
    stale_wait_minutes: int = setting(
        STALE_WAIT_MINUTES,
        "minutes a wait may see nothing change before the stale-wait rule (R12) reminds; it "
        "stops when as many minutes more pass unchanged (read once per session)",
        env="SEAWALL_STALE_WAIT_MINUTES",
        read_by=(WORKER,),
        ge=1,
    )
    context_budget_chars: int = setting(
        DEFAULT_CONTEXT_BUDGET_CHARS,
        "characters of the conversation one model request may carry, for prompts that set "
        "no budget of their own (read once per session)",
        env="SEAWALL_CONTEXT_BUDGET_CHARS",
        read_by=(WORKER,),
        ge=MIN_CONTEXT_BUDGET_CHARS,
    )
    activity_summaries: bool = setting(
        False,
        "name each model and tool activity in the Temporal UI (`read_file (batch 3)`); "
        "costs a payload per activity (read once per session)",
        env="SEAWALL_ACTIVITY_SUMMARIES",
        read_by=(WORKER,),
    )
    approval_rules: ApprovalRulesFile = setting(
        None,
        "a YAML file of approval rules: which calls run, ask first or never run "
        "(docs/protections.md); read when each session starts",
        env="SEAWALL_APPROVAL_RULES",
        read_by=(WORKER,),
    )
    rerun_lost_calls: bool = setting(
        False,
        "run a call again when its worker was lost while it ran, even when its tool may "
        "change things (at least once); off: only tools safe to repeat run again",
        env="SEAWALL_RERUN_LOST_CALLS",
        read_by=(WORKER,),
    )
    repeatable_tools: str | None = setting(
        None,
        "more tools (comma-separated name globs) safe to run again when their worker was "
        "lost, besides the read-only built-ins and MCP tools annotated read-only or idempotent",
        env="SEAWALL_REPEATABLE_TOOLS",
        read_by=(WORKER,),
    )
    max_cached_workflows: int = setting(
        1000,
        "workflows a worker keeps in memory; 0 replays every workflow task from history",
        env="SEAWALL_MAX_CACHED_WORKFLOWS",
        read_by=(WORKER,),
        ge=0,
    )
    # Bounded above by more than the SDK's 100 activity slots (docs/capacity.md, "Eager calls").
    eager_calls_per_workflow_task: int = setting(
        16,
        "model and tool calls of one workflow task a worker starts itself, without a trip "
        "through the task queue (the SDK's default is 3); 0 sends every call through the "
        "task queue",
        env="SEAWALL_EAGER_CALLS_PER_WORKFLOW_TASK",
        read_by=(WORKER,),
        ge=0,
        le=1000,
    )
    # --- the model endpoint -----------------------------------------------------------------
    openai_base_url: str | None = setting(
        None,
        "OpenAI-compatible endpoint (unset, and no key: the offline demo model)",
        env="OPENAI_BASE_URL",
        read_by=(WORKER,),
    )
    openai_api_key: SecretStr | None = setting(
        None, "model endpoint API key", env="OPENAI_API_KEY", read_by=(WORKER,), secret=True
    )
    model: str = setting(
        "gpt-4o-mini",
        "model name for the openai provider",
        env="SEAWALL_MODEL",
        read_by=(WORKER,),
        min_length=1,
    )
    model_temperature: float | None = setting(
        None,
        "sampling temperature, 0-2 (unset: the endpoint's default)",
        env="SEAWALL_MODEL_TEMPERATURE",
        read_by=(WORKER,),
        ge=0,
        le=2,
    )
    model_max_tokens: int | None = setting(
        None,
        "completion token limit (unset: the endpoint's default)",
        env="SEAWALL_MODEL_MAX_TOKENS",
        read_by=(WORKER,),
        gt=0,
    )
    # Below the model activity's five-minute start-to-close timeout, so the SDK's own
    # timeout (a retryable error) fires before Temporal's.
    model_timeout_seconds: float = setting(
        180.0,
        "timeout of one model request",
        env="SEAWALL_MODEL_TIMEOUT_SECONDS",
        read_by=(WORKER,),
        gt=0,
        le=3600,
    )
    # Handed to prompts like the context budget (docs/durability.md, "Model requests and outages"):
    # a request that keeps failing is retried until this long after its first attempt, so an
    # endpoint down for minutes does not end the prompt.
    model_retry_window_seconds: float = setting(
        DEFAULT_MODEL_RETRY_WINDOW_SECONDS,
        "how long a failing model request is retried, from its first attempt, before the "
        "prompt ends `error` (read once per session)",
        env="SEAWALL_MODEL_RETRY_WINDOW_SECONDS",
        read_by=(WORKER,),
        ge=MIN_MODEL_RETRY_WINDOW_SECONDS,
        le=MAX_MODEL_RETRY_WINDOW_SECONDS,
    )
    # --- MCP tool servers -------------------------------------------------------------------
    # The JSON object of servers; activities.mcp checks each server.
    mcp_servers: McpServers = setting(
        None,
        "MCP servers, a JSON object (in the user config directory: mcp.json)",
        env="SEAWALL_MCP_SERVERS",
        read_by=(WORKER,),
        secret=True,
        config_file=MCP_FILE_NAME,
    )
    mcp_tool_timeout_seconds: float | None = setting(
        None,
        "timeout of one MCP tool call (the prompt's tool timeout still bounds it)",
        env="SEAWALL_MCP_TOOL_TIMEOUT_SECONDS",
        read_by=(WORKER,),
        gt=0,
    )
    mcp_connect_timeout_seconds: float = setting(
        20.0,
        "bound on starting an MCP server and listing its tools",
        env="SEAWALL_MCP_CONNECT_TIMEOUT_SECONDS",
        read_by=(WORKER,),
        gt=0,
    )
    mcp_stderr: Lowered[Literal["discard", "inherit"]] = setting(
        "discard",
        "a stdio MCP server's stderr: discard | inherit",
        env="SEAWALL_MCP_STDERR",
        read_by=(WORKER,),
    )
    # --- the sandbox of model-chosen processes (docs/security-sandbox.md) ------------------
    # Every shell command and stdio MCP server runs under bubblewrap with the session's
    # workspace as its only writable path (activities/sandbox/). ``none`` runs them bare:
    # only for single-user local use.
    sandbox: OnOffWord[Literal["bwrap", "none"]] = setting(
        "bwrap",
        "how shell commands and stdio MCP servers are confined: bwrap | none (bare, "
        "single-user local use only)",
        env="SEAWALL_SANDBOX",
        read_by=(WORKER,),
    )
    sandbox_network: OnOffWord[Literal["off", "on"]] = setting(
        "off",
        "network of sandboxed processes: off (none at all) | on (through slirp4netns; the "
        "host's loopback services stay unreachable)",
        env="SEAWALL_SANDBOX_NETWORK",
        read_by=(WORKER,),
    )
    # --- its resource limits: one field per row of SANDBOX_LIMIT_SETTINGS (sandbox_limits.py)
    sandbox_cpu_seconds: int = sandbox_limit_setting("sandbox_cpu_seconds")
    sandbox_memory_mb: int = sandbox_limit_setting("sandbox_memory_mb")
    sandbox_file_size_mb: int = sandbox_limit_setting("sandbox_file_size_mb")
    sandbox_max_processes: int = sandbox_limit_setting("sandbox_max_processes")
    sandbox_memory_max_mb: int = sandbox_limit_setting("sandbox_memory_max_mb")
    sandbox_cpu_weight: int = sandbox_limit_setting("sandbox_cpu_weight")
    sandbox_cpu_max_percent: int = sandbox_limit_setting("sandbox_cpu_max_percent")
    sandbox_owner_cpu_max_percent: int = sandbox_limit_setting("sandbox_owner_cpu_max_percent")
    sandbox_owner_memory_max_mb: int = sandbox_limit_setting("sandbox_owner_memory_max_mb")
    sandbox_workspace_disk_mb: int = sandbox_limit_setting("sandbox_workspace_disk_mb")
    sandbox_owner_disk_mb: int = sandbox_limit_setting("sandbox_owner_disk_mb")
    # --- (end of the resource limits) ---------------------------------------------------
    sandbox_env_passthrough: VariableNames = setting(
        "",
        "extra environment variables a sandboxed process inherits from the worker, "
        "comma-separated names (secrets are withheld all the same)",
        env="SEAWALL_SANDBOX_ENV_PASSTHROUGH",
        read_by=(WORKER,),
    )

    # --- the gateway and its clients --------------------------------------------------------
    gateway_host: str = setting(
        "127.0.0.1",
        "address the gateway listens on",
        env="SEAWALL_GATEWAY_HOST",
        read_by=(GATEWAY, PROMPT),
        min_length=1,
    )
    gateway_port: int = setting(
        8000,
        "port the gateway listens on",
        env="SEAWALL_GATEWAY_PORT",
        read_by=(GATEWAY, UP, PROMPT),
        ge=0,
        le=65535,
    )
    gateway_token: SecretStr | None = setting(
        None,
        "gateway bearer token (environment only)",
        env="SEAWALL_GATEWAY_TOKEN",
        read_by=(GATEWAY, PROMPT),
        secret=True,
        config_file=None,
    )
    gateway_url: HttpUrl = setting(
        None,
        "gateway base URL for seawall prompt (unset: from gateway_host and gateway_port)",
        env="SEAWALL_GATEWAY_URL",
        read_by=(PROMPT,),
    )
    workspaces: UserPath[Path | None] = setting(
        None,
        "directory of the sessions' workspaces (unset: <data_dir>/workspaces); the worker "
        "refuses a workspace outside it",
        env="SEAWALL_WORKSPACES",
        read_by=(GATEWAY, UP, WORKER, RUN),
    )
    # The session workflow takes no more than MAX_PROMPT_CHARS, so neither may the gateway.
    max_prompt_chars: int = setting(
        MAX_PROMPT_CHARS,
        "longest prompt the gateway accepts",
        env="SEAWALL_MAX_PROMPT_CHARS",
        read_by=(GATEWAY, ACP),
        ge=1,
        le=MAX_PROMPT_CHARS,
    )
    approval_mode: ApprovalMode = setting(
        ApprovalMode.DEFAULT,
        "default approval mode of a session: default | auto_edit | yolo",
        env="SEAWALL_APPROVAL_MODE",
        read_by=(GATEWAY, ACP),
    )
    # A client may choose a stricter approval mode than this, never a looser one
    # (docs/security.md, "What a client may choose"); unset: approval_mode itself.
    loosest_approval_mode: ApprovalMode | None = setting(
        None,
        "loosest approval mode a client may choose for its session or switch it to "
        "(default | auto_edit | yolo; unset: approval_mode)",
        env="SEAWALL_LOOSEST_APPROVAL_MODE",
        read_by=(GATEWAY, ACP),
    )
    permission_timeout_seconds: float = setting(
        DEFAULT_PERMISSION_TIMEOUT_SECONDS,
        "how long a permission request waits for an answer",
        env="SEAWALL_PERMISSION_TIMEOUT_SECONDS",
        read_by=(GATEWAY, ACP),
        gt=0,
    )
    redacted_arguments: str | None = setting(
        None,
        "more argument names whose values a permission request shows as [redacted] "
        "(comma-separated, case-insensitive globs), besides the built-in *token*, *secret*, "
        "*password* and the like",
        env="SEAWALL_REDACTED_ARGUMENTS",
        read_by=(GATEWAY, ACP),
    )
    # Off by default: an editor's buffers and a round trip to its UI change what a file
    # call means and how long it may wait, so the operator opts in (docs/acp.md,
    # "Editor-side tools").
    acp_client_tools: EditorTools = setting(
        EditorTools.OFF,
        "which built-in tools of an editor's session run through the editor when it offers "
        "them: off | fs (read_file and write_file through its fs/read_text_file and "
        "fs/write_text_file)",
        env="SEAWALL_ACP_CLIENT_TOOLS",
        read_by=(ACP,),
    )
    # Off by default: a scripted session runs tools the client chose. The worker checks it
    # too (docs/security-trust.md): a workflow started directly on Temporal is no exception.
    allow_scripted_models: bool = setting(
        False,
        "let a client script its session's model and fixture tools (simulations, end-to-end "
        "tests); the worker refuses them without it",
        env="SEAWALL_ALLOW_SCRIPTED_MODELS",
        read_by=(GATEWAY, ACP, WORKER),
    )
    # A channel session runs with the guard off (the seed's channel bridges): only for the
    # owners the operator names. The worker checks it too (docs/security-trust.md).
    channel_owners: OwnerList = setting(
        None,
        "owners whose sessions may be channel-bridge sessions (client_metadata.channel: "
        "true) or non-interactive routes, which run with the guard off: owner ids, "
        "comma-separated, or * for every caller (unset: none)",
        env="SEAWALL_CHANNEL_OWNERS",
        read_by=(GATEWAY, WORKER),
    )
    # workflows/session/owner_admission.py: counted across every replica.
    max_concurrent_prompts_per_owner: int = setting(
        16,
        "prompts one owner of the tokens file may have running or queued at once, over all "
        "its sessions (0: no limit)",
        env="SEAWALL_MAX_CONCURRENT_PROMPTS_PER_OWNER",
        read_by=(GATEWAY,),
        ge=0,
        le=1000,
    )
    # --- per-owner quotas (docs/security-gateway.md, "Per-owner quotas") ------------------------
    # Counted, like the prompt limit, in the owner's admission workflow: across every replica.
    max_open_sessions_per_owner: int = setting(
        100,
        "sessions one owner of the tokens file may have open at once (0: no limit)",
        env="SEAWALL_MAX_OPEN_SESSIONS_PER_OWNER",
        read_by=(GATEWAY,),
        ge=0,
    )
    max_client_metadata_bytes: int = setting(
        16 * 1024,
        "largest client_metadata (as JSON, in bytes) a session may be created with; every "
        "prompt's input carries it again",
        env="SEAWALL_MAX_CLIENT_METADATA_BYTES",
        read_by=(GATEWAY,),
        ge=2,
        le=1024 * 1024,
    )
    max_stored_bytes_per_owner: int = setting(
        128 * 1024 * 1024,
        "bytes of prompt and input texts and client_metadata one owner's open sessions may "
        "hold, the metadata counted at the start and again with every prompt (0: no limit)",
        env="SEAWALL_MAX_STORED_BYTES_PER_OWNER",
        read_by=(GATEWAY,),
        ge=0,
    )
    # --- seawall up -------------------------------------------------------------------------
    data_dir: UserPath[Path] = setting(
        Path(".data"),
        "the dev server's database, logs, workspaces and stored payloads (seawall acp "
        "--embedded, when unset: $XDG_DATA_HOME/seawall)",
        env="SEAWALL_DATA_DIR",
        read_by=(UP, GATEWAY, WORKER, RUN, ACP, STORAGE),
    )
    stack_host: str = setting(
        "127.0.0.1",
        "address seawall up binds its servers to",
        env="SEAWALL_HOST",
        read_by=(UP,),
        min_length=1,
    )
    temporal_port: int = setting(
        7233,
        "seawall up's Temporal port",
        env="SEAWALL_TEMPORAL_PORT",
        read_by=(UP,),
        ge=1,
        le=65535,
    )
    ui_port: int = setting(
        8233, "seawall up's Temporal UI port", env="SEAWALL_UI_PORT", read_by=(UP,), ge=1, le=65535
    )
    # Off: the dev UI has no authentication, and its settings endpoint would hand the codec
    # endpoint and its token to whoever opens it (docs/security-codec.md).
    ui_codec: bool = setting(
        False,
        "let seawall up's Temporal UI decode stored payloads through the gateway's codec "
        "endpoint; its unauthenticated settings endpoint then serves that endpoint and its "
        "token to whoever reaches the UI",
        env="SEAWALL_UI_CODEC",
        read_by=(UP,),
    )
    # --- logs, metrics, tracing -------------------------------------------------------------
    log_format: Lowered[LogFormat] = setting(
        "json", "json | console", env="SEAWALL_LOG_FORMAT", read_by=(WORKER, GATEWAY, RUN, ACP)
    )
    log_level: LogLevel = setting(
        "INFO",
        "DEBUG | INFO | WARNING | ERROR | CRITICAL (seawall run: WARNING when unset)",
        env="SEAWALL_LOG_LEVEL",
        read_by=(WORKER, GATEWAY, RUN, ACP),
    )
    metrics_host: str = setting(
        "127.0.0.1", "Prometheus endpoint address", env="SEAWALL_METRICS_HOST", read_by=(WORKER,)
    )
    metrics_port: int | None = setting(
        None,
        "Prometheus endpoint port (unset: no endpoint)",
        env="SEAWALL_METRICS_PORT",
        read_by=(WORKER,),
        ge=0,
        le=65535,
    )
    otlp_endpoint: str | None = setting(
        None,
        "OTLP collector for metrics and spans",
        env="SEAWALL_OTLP_ENDPOINT",
        read_by=(WORKER,),
    )
    otel_tracing: bool = setting(
        False,
        "Temporal's OpenTelemetry tracing interceptor",
        env="SEAWALL_OTEL_TRACING",
        read_by=(WORKER,),
    )
    otel_resource_attributes: str | None = setting(
        None,
        "deployment.environment=…,service.version=… (metric and span attributes)",
        env="OTEL_RESOURCE_ATTRIBUTES",
        read_by=(WORKER,),
    )
    deployment_environment: str | None = setting(
        None,
        "deployment.environment (overrides OTEL_RESOURCE_ATTRIBUTES)",
        env="SEAWALL_DEPLOYMENT_ENVIRONMENT",
        read_by=(WORKER,),
    )
    service_version: str | None = setting(
        None,
        "service.version (overrides OTEL_RESOURCE_ATTRIBUTES)",
        env="SEAWALL_SERVICE_VERSION",
        read_by=(WORKER,),
    )

    # --- rollout: owners and cohorts (docs/rollout.md, "Rollout cohorts") -------------
    # The worker reads the path only, to hide the file from sandboxed processes
    # (activities/sandbox/policy.py); only the gateway opens it (value_types.py).
    gateway_tokens_file: OwnerTokensFile = setting(
        None,
        "YAML file of owner ids and their gateway bearer tokens (several owners)",
        env="SEAWALL_GATEWAY_TOKENS_FILE",
        read_by=(GATEWAY, WORKER),
        secret_file=True,
    )
    owner_id: OwnerId = setting(
        None,
        "owner id of a local client's sessions (unset: local:<user name>)",
        env="SEAWALL_OWNER_ID",
        read_by=(ACP,),
    )
    guard_rollout_salt: str | None = setting(
        None,
        "salt of the owner hash that assigns rollout cohorts (required with guard_rollout)",
        env="SEAWALL_GUARD_ROLLOUT_SALT",
        read_by=(WORKER,),
    )
    guard_rollout_version: str | None = setting(
        None,
        "service version the rollout policy is pinned to (other versions: the guard mode)",
        env="SEAWALL_GUARD_ROLLOUT_VERSION",
        read_by=(WORKER,),
    )
    guard_rollout_allow_wide_enforce: bool = setting(
        False,
        "allow a rollout policy to enforce for more than 5% of owners",
        env="SEAWALL_GUARD_ROLLOUT_ALLOW_WIDE_ENFORCE",
        read_by=(WORKER,),
    )
    # Last: its validator checks the fields above (and the deployment environment).
    guard_rollout: str | None = setting(
        None,
        "rollout policy, e.g. enforce:5%,warn:rest or internal=enforce:5%,warn:rest;public=…",
        env="SEAWALL_GUARD_ROLLOUT",
        read_by=(WORKER,),
    )

    # --- payload storage (docs/durability.md, "Long prompts and stored payloads") ------
    payload_storage: StorageKind = setting(
        "filesystem",
        "filesystem | s3 | off: where payloads past the threshold live",
        env="SEAWALL_PAYLOAD_STORAGE",
        read_by=(WORKER, GATEWAY, RUN, ACP, STORAGE),
    )
    payload_storage_threshold_bytes: int = setting(
        DEFAULT_THRESHOLD_BYTES,
        "payloads of at least this many bytes are stored outside Temporal's history",
        env="SEAWALL_PAYLOAD_STORAGE_THRESHOLD_BYTES",
        read_by=(WORKER, GATEWAY, RUN, ACP),
        ge=0,
        le=2_000_000,
    )
    payload_storage_dir: UserPath[Path | None] = setting(
        None,
        "the filesystem store's directory (unset: <data_dir>/payloads)",
        env="SEAWALL_PAYLOAD_STORAGE_DIR",
        read_by=(WORKER, GATEWAY, RUN, ACP, STORAGE),
    )
    payload_storage_bucket: str | None = setting(
        None,
        "the s3 store's bucket (required with payload_storage=s3)",
        env="SEAWALL_PAYLOAD_STORAGE_BUCKET",
        read_by=(WORKER, GATEWAY, RUN, ACP, STORAGE),
        validate_default=True,
    )
    payload_storage_s3_endpoint: str | None = setting(
        None,
        "S3-compatible endpoint URL, e.g. MinIO's (unset: AWS)",
        env="SEAWALL_PAYLOAD_STORAGE_S3_ENDPOINT",
        read_by=(WORKER, GATEWAY, RUN, ACP, STORAGE),
    )
    payload_storage_s3_region: str | None = setting(
        None,
        "the bucket's region (unset: the AWS SDK's default chain)",
        env="SEAWALL_PAYLOAD_STORAGE_S3_REGION",
        read_by=(WORKER, GATEWAY, RUN, ACP, STORAGE),
    )

    # --- session grants and trusted roots (docs/security-trust.md) -------------------------
    # The starters (gateway, seawall acp, seawall run) sign a session's start with it; the
    # worker refuses a fresh session or root prompt whose grant does not verify. Unset: the
    # key file <data_dir>/session-signing.key (created 0600 by whichever process needs it
    # first), so processes sharing a data directory share the key.
    session_signing_key: SecretStr | None = setting(
        None,
        "HMAC key the gateway and seawall acp sign session starts with and the worker "
        "verifies (environment only; unset: <data_dir>/session-signing.key, made when missing)",
        env="SEAWALL_SESSION_SIGNING_KEY",
        read_by=(WORKER, GATEWAY, UP, RUN, ACP),
        secret=True,
        config_file=None,
        min_length=32,
    )
    session_signing_previous_key: SecretStr | None = setting(
        None,
        "the key before session_signing_key, still accepted by the worker while starters "
        "rotate (environment only)",
        env="SEAWALL_SESSION_SIGNING_PREVIOUS_KEY",
        read_by=(WORKER,),
        secret=True,
        config_file=None,
        min_length=32,
    )
    editor_workspaces: UserPath[Path | None] = setting(
        None,
        "directory holding the folders editors open through seawall acp; the worker also "
        "accepts workspaces under it (unset: seawall acp --embedded, the home directory; "
        "other workers, none)",
        env="SEAWALL_EDITOR_WORKSPACES",
        read_by=(WORKER, ACP),
    )

    # The Temporal UI's codec endpoint (gateway/codec.py; docs/durability.md, "Long prompts
    # and stored payloads"): the credential in its URL and the origins its browser calls
    # come from.
    codec_token: SecretStr | None = setting(
        None,
        "credential of the Temporal UI's codec endpoint, <gateway>/codec/ui/<token> (decode "
        "only; environment only; seawall up makes one when unset)",
        env="SEAWALL_CODEC_TOKEN",
        read_by=(GATEWAY, UP),
        secret=True,
        config_file=None,
    )
    codec_ui_origins: Origins = setting(
        DEFAULT_CODEC_UI_ORIGINS,
        "origins of the Temporal UI allowed to call the codec endpoint, comma-separated",
        env="SEAWALL_CODEC_UI_ORIGINS",
        read_by=(GATEWAY,),
    )

    # --- a process's own settings ---------------------------------------------------------

    def keep_only(self, readers: Readers) -> None:
        """Drop every value ``readers`` do not read (called once, by the loader, on the model
        it just validated): what a process does not read, it does not hold."""
        self._readers = readers
        fields = type(self).model_fields
        for name in [n for n in self.__dict__ if n in fields]:
            if not readers.reads(setting_of(name, fields[name])):
                del self.__dict__[name]

    if not TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any:
            info = type(self).model_fields.get(name)
            if info is None:
                return super().__getattr__(name)
            read_by = ", ".join(setting_of(name, info).read_by)
            raise AttributeError(
                f"setting {name!r} is not read by {self._readers.describe()} (read by: "
                f"{read_by}); a process that uses it belongs in its read_by "
                "(seawall/runtime/settings/catalogue.py)"
            )

    # --- the two checks that compare settings ---------------------------------------------

    @field_validator("payload_storage_bucket")
    @classmethod
    def _bucket_with_s3(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None and info.data.get("payload_storage") == "s3":
            raise ValueError("required when payload_storage is s3")
        return value

    @field_validator("guard_rollout", mode="after")
    @classmethod
    def _rollout(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            data = info.data
            check_rollout(
                value,
                salt=data.get("guard_rollout_salt"),
                environment=deployment_environment(
                    data.get("deployment_environment"), data.get("otel_resource_attributes")
                ),
                allow_wide_enforce=bool(data.get("guard_rollout_allow_wide_enforce")),
            )
        return value

    @property
    def workspaces_dir(self) -> Path:
        """Where session workspaces live, absolute (relative values are taken from the
        working directory of the process that reads them)."""
        return (self.workspaces or self.data_dir / "workspaces").absolute()

    @property
    def gateway_client_url(self) -> str:
        """The gateway's URL for a client on this machine: ``gateway_url``, else built
        from ``gateway_host`` (a wildcard address means loopback) and ``gateway_port``."""
        if self.gateway_url:
            return self.gateway_url
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(
            self.gateway_host, self.gateway_host
        )
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.gateway_port}"


SETTINGS: tuple[Setting, ...] = tuple(
    setting_of(name, info) for name, info in SeawallSettings.model_fields.items()
)
SETTINGS_BY_NAME: Mapping[str, Setting] = {s.name: s for s in SETTINGS}


@functools.cache
def validator_of(name: str) -> TypeAdapter[Any]:
    """The field validator of setting ``name``: the one the settings model uses
    (:func:`~.fields.field_validator_of`)."""
    return field_validator_of(SeawallSettings.model_fields[name])


def default_of(name: str) -> Any:
    """The default of setting ``name``, for views of the settings (the gateway's, the
    stack's) that must not define defaults of their own."""
    return SeawallSettings.model_fields[name].get_default(call_default_factory=True)
