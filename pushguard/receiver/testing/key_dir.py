"""A local issuer kept in a folder, so that ``pushguard push`` and a development server share it.

The folder holds ``issuer-key.pem`` (the RSA private key, PKCS #8, mode 0600) and ``certs.json``
(``{kid: PEM certificate}``, the form of https://www.googleapis.com/oauth2/v1/certs, for
receivers in other languages). Whoever comes first creates the key; the other loads it (the key
file appears in one step: written aside, then linked into place). The ``kid`` is derived from
the public key, so two folders never share one.

A folder that is not as the kit leaves it is refused, never repaired: a key file readable by
the group or others (a private key that may have leaked), a ``certs.json`` that does not hold
the key's certificate (receivers in other languages would refuse every token), a path that is a
file.

Nothing reads the folder unless it is named: a receiver trusts it only through
``PushVerifier(..., keys=local_key_source(folder))`` in code that runs on a developer's machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from pushguard.receiver.keys import MIN_RSA_BITS, StaticKeySource
from pushguard.receiver.testing.issuer import LocalIssuer

KEY_FILE = "issuer-key.pem"
CERTS_FILE = "certs.json"


def default_key_dir() -> Path:
    """``$XDG_CACHE_HOME/pushguard/local-issuer`` (``~/.cache/pushguard/local-issuer`` when
    ``XDG_CACHE_HOME`` is unset): where ``pushguard push`` keeps its key unless told otherwise."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "pushguard" / "local-issuer"


def _kid(key: rsa.RSAPrivateKey) -> str:
    public = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return f"pushguard-local-{hashlib.sha256(public).hexdigest()[:16]}"


def _load_key(path: Path) -> rsa.RSAPrivateKey:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, rsa.RSAPrivateKey) or key.key_size < MIN_RSA_BITS:
        raise ValueError(f"{path}: an RSA key of at least {MIN_RSA_BITS} bits is required")
    return key


def _create_key(folder: Path) -> None:
    """Write a new key to ``folder/issuer-key.pem`` unless one is there (never replaced)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    handle, aside = tempfile.mkstemp(dir=folder, prefix=".issuer-key-")
    try:
        os.fchmod(handle, 0o600)
        os.write(handle, pem)
        os.close(handle)
        os.link(aside, folder / KEY_FILE)  # fails if another process was first: theirs is used
    except FileExistsError:
        pass
    finally:
        Path(aside).unlink(missing_ok=True)


def _check_private(path: Path) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise ValueError(
            f"{path}: readable by group or others (mode {mode:04o}); the issuer's private key "
            f"must be mode 0600 (chmod 600 {path}, or delete the folder for a new key)"
        )


def _public(key: rsa.RSAPublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _stored_certificate(certs: Path, kid: str, key: rsa.RSAPrivateKey) -> str:
    """The PEM certificate ``certs.json`` holds for ``kid``, checked against ``key``."""
    refusal = f"{certs}: does not hold the certificate of {KEY_FILE} (kid {kid})"
    try:
        pem = json.loads(certs.read_text(encoding="utf-8")).get(kid)
        public = x509.load_pem_x509_certificate(pem.encode("ascii")).public_key()
    except (ValueError, AttributeError, TypeError, UnicodeError):
        raise ValueError(f"{refusal}; delete it to have it written again") from None
    if not isinstance(public, rsa.RSAPublicKey) or _public(public) != _public(key.public_key()):
        raise ValueError(f"{refusal}: another key's; delete it to have it written again")
    return str(pem)


def load_or_create_issuer(folder: str | os.PathLike[str] | None = None) -> LocalIssuer:
    """The issuer kept in ``folder`` (default :func:`default_key_dir`), created on first use.

    Raises:
        ValueError: ``folder`` is a file; the folder's key file is not an unencrypted PEM RSA
            key of 2048+ bits, or is readable by group or others; its ``certs.json`` does not
            hold the key's certificate.
        OSError: the folder cannot be created or read.
    """
    where = Path(folder) if folder is not None else default_key_dir()
    if where.exists() and not where.is_dir():
        raise ValueError(f"{where}: a file, not a folder (the issuer's key folder)")
    where.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not (where / KEY_FILE).exists():
        _create_key(where)
    _check_private(where / KEY_FILE)
    key = _load_key(where / KEY_FILE)
    certs = where / CERTS_FILE
    kid = _kid(key)
    if certs.exists():
        return LocalIssuer(kid, key=key, certificate=_stored_certificate(certs, kid, key))
    issuer = LocalIssuer(kid, key=key)
    handle, aside = tempfile.mkstemp(dir=where, prefix=".certs-")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(issuer.certs, out, indent=2, sort_keys=True)
    os.replace(aside, certs)
    return issuer


def local_key_source(folder: str | os.PathLike[str] | None = None) -> StaticKeySource:
    """A key source that trusts the issuer kept in ``folder`` (created on first use) and nothing
    else: ``PushVerifier(..., keys=local_key_source(folder))`` in a development server, while
    ``pushguard push --issuer-key-dir folder`` signs the pushes.

    Raises:
        ValueError, OSError: as :func:`load_or_create_issuer`.
    """
    return load_or_create_issuer(folder).key_source()
