"""A real aioquic HTTP/3 exchange over an in-memory datagram pair, logged by aioquic.

Both endpoints are aioquic's own QuicConnection + H3Connection, with TLS 1.3 over a
self-signed EC certificate made here; datagrams are handed from one to the other until
nothing moves. The client sends one GET; the server answers 200 with a short body. The
``quic_logger`` of each side is whatever the caller passes (QuicLogger or QuicFileLogger).
"""

from __future__ import annotations

import datetime
import ssl

from aioquic.h3.connection import H3Connection
from aioquic.h3.events import DataReceived, H3Event, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.logger import QuicLogger
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

ADDRESS = ("192.0.2.1", 443)
REQUEST = [
    (b":method", b"GET"),
    (b":scheme", b"https"),
    (b":authority", b"localhost"),
    (b":path", b"/"),
]
RESPONSE = [(b":status", b"200"), (b"content-type", b"text/plain")]
BODY = b"hello"


def self_signed_certificate() -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    return certificate, key


def run_get(client_logger: QuicLogger, server_logger: QuicLogger) -> bytes:
    """Run the exchange and close the connection; returns the body the client received."""
    certificate, key = self_signed_certificate()
    client_configuration = QuicConfiguration(
        is_client=True, alpn_protocols=["h3"], quic_logger=client_logger, server_name="localhost"
    )
    client_configuration.verify_mode = ssl.CERT_NONE
    server_configuration = QuicConfiguration(
        is_client=False, alpn_protocols=["h3"], quic_logger=server_logger
    )
    server_configuration.certificate = certificate
    server_configuration.private_key = key

    now = 1000.0
    client = QuicConnection(configuration=client_configuration)
    server = QuicConnection(
        configuration=server_configuration,
        original_destination_connection_id=client.original_destination_connection_id,
    )
    client.connect(ADDRESS, now=now)
    client_h3, server_h3 = H3Connection(client), H3Connection(server)
    body = bytearray()

    def on_server(event: H3Event) -> None:
        if isinstance(event, HeadersReceived):
            server_h3.send_headers(event.stream_id, RESPONSE)
            server_h3.send_data(event.stream_id, BODY, end_stream=True)

    def on_client(event: H3Event) -> None:
        if isinstance(event, DataReceived):
            body.extend(event.data)

    def pump() -> None:
        nonlocal now
        for _ in range(100):
            moved = False
            for sender, receiver, h3, handle in (
                (client, server, server_h3, on_server),
                (server, client, client_h3, on_client),
            ):
                for datagram, _ in sender.datagrams_to_send(now=now):
                    moved = True
                    receiver.receive_datagram(datagram, ADDRESS, now=now)
                quic_event = receiver.next_event()
                while quic_event is not None:
                    for h3_event in h3.handle_event(quic_event):
                        handle(h3_event)
                    quic_event = receiver.next_event()
            now += 0.001
            if not moved:
                return

    pump()
    client_h3.send_headers(client.get_next_available_stream_id(), REQUEST, end_stream=True)
    pump()
    client.close()
    pump()
    for connection in (client, server):  # let the closing/draining periods end
        connection.handle_timer(now=now + 10)
    return bytes(body)
