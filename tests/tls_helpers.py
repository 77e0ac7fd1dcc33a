"""A secured Temporal frontend for the tests: certificates made on the spot and a TLS proxy.

The CLI dev server speaks plain gRPC only, so :class:`TlsProxy` terminates TLS (ALPN ``h2``,
as gRPC needs) in front of it and forwards the bytes: with ``require_client_cert`` it is an
mTLS frontend that refuses a client without a certificate its CA signed, which is what a
secured self-hosted cluster or Temporal Cloud does. :func:`make_pki` writes a CA, a server
certificate for ``localhost``/``127.0.0.1`` and a client certificate (with ``cryptography``),
so nothing is downloaded or checked in. :func:`frontend_context` builds the proxy's TLS from
any certificate, key and client CAs (the compose stack's: tests/compose_helpers.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Pki:
    """PEM files: a CA, the server's certificate and key, a client's certificate and key."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _issue(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool = False,
    server: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, issuer_key = issuer if issuer is not None else (_name(subject), key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    else:
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def make_pki(directory: Path, name: str = "seawall-test") -> Pki:
    """A fresh CA with a server and a client certificate, as PEM files in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _issue(f"{name} CA", ca_key, None, ca=True)
    issuer = (ca_cert.subject, ca_key)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = _issue("localhost", server_key, issuer, server=True)
    client_key = ec.generate_private_key(ec.SECP256R1())
    client_cert = _issue(f"{name} client", client_key, issuer)
    files = {
        "ca": ca_cert.public_bytes(serialization.Encoding.PEM),
        "server_cert": server_cert.public_bytes(serialization.Encoding.PEM),
        "server_key": _key_pem(server_key),
        "client_cert": client_cert.public_bytes(serialization.Encoding.PEM),
        "client_key": _key_pem(client_key),
    }
    paths = {}
    for part, data in files.items():
        path = directory / f"{part}.pem"
        path.write_bytes(data)
        paths[part] = path
    return Pki(**paths)


def frontend_context(cert: Path, key: Path, client_cas: Sequence[Path] = ()) -> ssl.SSLContext:
    """A gRPC frontend's TLS (ALPN ``h2``) with ``cert`` and ``key``; with ``client_cas``, a
    client must present a certificate one of them signed (mTLS)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2"])
    if client_cas:
        context.verify_mode = ssl.CERT_REQUIRED
        for ca in client_cas:
            context.load_verify_locations(ca)
    return context


def common_name(certificate: Mapping[str, Any] | None) -> str | None:
    """The subject's CN of a certificate as ``ssl`` reports a peer's (``getpeercert()``)."""
    for rdn in (certificate or {}).get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None


class TlsProxy:
    """TLS (optionally mTLS) on a loopback port, forwarding to a plain TCP ``upstream``.

    ``connections`` counts the clients that passed the handshake (and so were forwarded);
    ``peers`` holds the common name of each one's client certificate (``None`` without one).
    """

    def __init__(self, context: ssl.SSLContext, upstream: str) -> None:
        host, _, port = upstream.rpartition(":")
        self.upstream = (host or "127.0.0.1", int(port))
        self.context = context
        self.connections = 0
        self.peers: list[str | None] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def address(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"127.0.0.1:{port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, "127.0.0.1", 0, ssl=self.context, ssl_handshake_timeout=10
        )

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # The handshake has succeeded by the time asyncio calls this.
        self.connections += 1
        self.peers.append(common_name(writer.get_extra_info("peercert")))
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            self._tasks.discard(task)
            return
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            for w in (writer, up_writer):
                with contextlib.suppress(Exception):
                    w.close()
            self._tasks.discard(task)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


@contextlib.asynccontextmanager
async def tls_proxy(
    pki: Pki, upstream: str, *, require_client_cert: bool
) -> AsyncIterator[TlsProxy]:
    """A running :class:`TlsProxy` with ``pki``'s server certificate, stopped on exit."""
    context = frontend_context(
        pki.server_cert, pki.server_key, [pki.ca] if require_client_cert else []
    )
    async with proxying(context, upstream) as proxy:
        yield proxy


@contextlib.asynccontextmanager
async def proxying(context: ssl.SSLContext, upstream: str) -> AsyncIterator[TlsProxy]:
    """A running :class:`TlsProxy` with ``context``, stopped on exit."""
    proxy = TlsProxy(context, upstream)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.stop()


@dataclass
class RecordingFrontend:
    """A TLS gRPC server that refuses every call as Temporal Cloud refuses a bad API key
    (``UNAUTHENTICATED``), after recording each call's method and request metadata."""

    address: str
    calls: list[tuple[str, dict[str, str]]]


@contextlib.asynccontextmanager
async def recording_frontend(pki: Pki) -> AsyncIterator[RecordingFrontend]:
    """A :class:`RecordingFrontend` on a loopback port with ``pki``'s server certificate
    (needs ``grpcio``, which the otel extra brings)."""
    import grpc  # type: ignore[import-untyped]

    calls: list[tuple[str, dict[str, str]]] = []

    async def refuse(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "Request unauthorized.")
        raise AssertionError("abort raises")

    class Recorder(grpc.GenericRpcHandler):  # type: ignore[misc]
        def service(
            self, handler_call_details: grpc.HandlerCallDetails
        ) -> grpc.RpcMethodHandler | None:
            metadata = {key: str(value) for key, value in handler_call_details.invocation_metadata}
            calls.append((handler_call_details.method, metadata))
            return grpc.unary_unary_rpc_method_handler(refuse)

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((Recorder(),))
    credentials = grpc.ssl_server_credentials(
        [(pki.server_key.read_bytes(), pki.server_cert.read_bytes())]
    )
    port = server.add_secure_port("127.0.0.1:0", credentials)
    await server.start()
    try:
        yield RecordingFrontend(address=f"127.0.0.1:{port}", calls=calls)
    finally:
        await server.stop(grace=None)
