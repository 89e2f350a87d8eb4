"""Test certificates for the TLS client checks: a CA, a server certificate for 127.0.0.1 and
localhost, and a client certificate (mutual TLS), written as PEM files. Made with the
`cryptography` package; nothing here is for production use."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write_key(key, path: Path) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


def make(out: Path) -> dict[str, Path]:
    """Writes ca.pem, server.pem, server-key.pem, client.pem and client-key.pem into out and
    returns their paths by name (ca, server_cert, server_key, client_cert, client_key)."""
    out.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    until = now + datetime.timedelta(days=2)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name("flightsrv test CA")).issuer_name(_name("flightsrv test CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now).not_valid_after(until)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))

    def leaf(cn: str, usage, san=None):
        key = ec.generate_private_key(ec.SECP256R1())
        b = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(ca.subject)
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now).not_valid_after(until)
             .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
             .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if san:
            b = b.add_extension(x509.SubjectAlternativeName(san), critical=False)
        return key, b.sign(ca_key, hashes.SHA256())

    srv_key, srv = leaf("127.0.0.1", ExtendedKeyUsageOID.SERVER_AUTH,
                        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cli_key, cli = leaf("flightsrv test client", ExtendedKeyUsageOID.CLIENT_AUTH)
    paths = {"ca": out / "ca.pem", "server_cert": out / "server.pem", "server_key": out / "server-key.pem",
             "client_cert": out / "client.pem", "client_key": out / "client-key.pem"}
    paths["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths["server_cert"].write_bytes(srv.public_bytes(serialization.Encoding.PEM))
    paths["client_cert"].write_bytes(cli.public_bytes(serialization.Encoding.PEM))
    _write_key(srv_key, paths["server_key"])
    _write_key(cli_key, paths["client_key"])
    return paths
