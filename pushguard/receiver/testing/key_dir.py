"""A local issuer kept in a folder, so that ``pushguard push`` and a development server share it.

The folder holds ``issuer-key.pem`` (the RSA private key, PKCS #8, mode 0600) and ``certs.json``
(``{kid: PEM certificate}``, the form of https://www.googleapis.com/oauth2/v1/certs, for
receivers in other languages). Whoever comes first creates the key; the other loads it (the key
file appears in one step: written aside, then linked into place). The ``kid`` is derived from
the public key, so two folders never share one.

Nothing reads the folder unless it is named: a receiver trusts it only through
``PushVerifier(..., keys=local_key_source(folder))`` in code that runs on a developer's machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

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


def load_or_create_issuer(folder: str | os.PathLike[str] | None = None) -> LocalIssuer:
    """The issuer kept in ``folder`` (default :func:`default_key_dir`), created on first use.

    Raises:
        ValueError: the folder's key file is not an unencrypted PEM RSA key of 2048+ bits.
        OSError: the folder cannot be created or read.
    """
    where = Path(folder) if folder is not None else default_key_dir()
    where.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not (where / KEY_FILE).exists():
        _create_key(where)
    key = _load_key(where / KEY_FILE)
    issuer = LocalIssuer(_kid(key), key=key)
    certs = where / CERTS_FILE
    if not certs.exists():
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
