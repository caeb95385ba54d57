"""The cell certificate: what ``minisge init`` makes for TLS between hosts.

A self-signed certificate and its private key (ECDSA P-256), one PEM file in
``common/`` closed to group and others (``common/cell_tls.pem``), copied to
every host of the cell with the cell key.  Made with the ``cryptography``
package (the standard library's ``ssl`` uses certificates but cannot make
them); only ``minisge init`` and a qmaster starting on a cell made before
there were certificates import this module.
"""

from __future__ import annotations

import datetime
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

#: a cell lives for years; renewing means copying common/ to every host again
VALIDITY = datetime.timedelta(days=100 * 365)


def make_cell_certificate(cell_name: str, now: datetime.datetime) -> bytes:
    """A new private key and self-signed certificate for the cell, PEM (key first)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"minisge cell {cell_name}"[:64])])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))  # hosts whose clocks lag a little
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False, key_agreement=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return key_pem + cert.public_bytes(serialization.Encoding.PEM)


def write_cell_certificate(path: str, cell_name: str) -> None:
    """Create ``path`` (mode 0600) with a new cell certificate; refuses
    (FileExistsError) to replace one: every host would need the new one."""
    pem = make_cell_certificate(cell_name, datetime.datetime.now(datetime.UTC))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, pem)
        os.fsync(fd)
    finally:
        os.close(fd)
