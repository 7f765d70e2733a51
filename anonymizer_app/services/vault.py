"""Secrets at rest: pseudonymization keys, re-identification tables and users' tokens for remote services
are stored encrypted (Fernet: AES-128-CBC with HMAC-SHA-256), under a key that is never stored with the data.

The key is ``ANONYMIZER_VAULT_KEY`` (a Fernet key: 32 url-safe base64 bytes; ``manage.py shell -c "from
cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"`` makes one), or, when unset,
derived from SECRET_KEY by HKDF. Older keys in ``ANONYMIZER_VAULT_OLD_KEYS`` (comma-separated) still
decrypt, so a key can be rotated: set the new key first, the old one in the list.
"""

from __future__ import annotations

import base64
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings


class VaultError(Exception):
    """A stored secret could not be decrypted (the key changed, or the bytes were altered)."""


def _derived_key(secret: str) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"anonymizer-vault", info=b"fernet key v1")
    return base64.urlsafe_b64encode(hkdf.derive(secret.encode()))


@lru_cache(maxsize=4)
def _fernet(primary: str, old: tuple[str, ...], secret_key: str) -> MultiFernet:
    keys = [primary.encode() if primary else _derived_key(secret_key)] + [k.encode() for k in old]
    return MultiFernet([Fernet(k) for k in keys])


def fernet() -> MultiFernet:
    primary = getattr(settings, "ANONYMIZER_VAULT_KEY", "") or ""
    old = tuple(getattr(settings, "ANONYMIZER_VAULT_OLD_KEYS", ()) or ())
    return _fernet(primary, old, settings.SECRET_KEY)


def encrypt(data: bytes) -> bytes:
    return fernet().encrypt(data)


def decrypt(token: bytes) -> bytes:
    try:
        return fernet().decrypt(token)
    except InvalidToken as exc:
        raise VaultError("a stored secret could not be decrypted: the vault key (ANONYMIZER_VAULT_KEY or "
                         "SECRET_KEY) is not the one it was stored under") from exc


def encrypt_text(text: str) -> str:
    return encrypt(text.encode()).decode("ascii")


def decrypt_text(token: str) -> str:
    return decrypt(token.encode("ascii")).decode()
