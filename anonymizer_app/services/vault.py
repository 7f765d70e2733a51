"""Secrets at rest: pseudonymization keys, re-identification tables, users' tokens for remote services, kept
SQL passwords, DICOM UID keys and m-invariance id secrets are stored encrypted (Fernet: AES-128-CBC with
HMAC-SHA-256), under a key that is never stored with the data (docs/vault.md).

- ``ANONYMIZER_VAULT_KEY``: the key new secrets are encrypted under. Its own secret, never derived from
  SECRET_KEY (a leaked SECRET_KEY must not open the vault). Earlier versions derived it from SECRET_KEY:
  ``manage.py rotate_vault_key --from-secret-key`` moves what they stored.
- ``ANONYMIZER_VAULT_OLD_KEYS``: earlier keys (comma-separated) that still decrypt, so that a key can be
  rotated: the new key in ANONYMIZER_VAULT_KEY, the old one here, then ``manage.py rotate_vault_key``.
- Unset in a development setup (DEBUG on, or SECRET_KEY still the public development key: ``make run``, the
  tests, a laptop's CLI): the development key, generated once into ANONYMIZER_VAULT_DEVELOPMENT_KEY_FILE
  (var/vault-development.key, 0600). With DEBUG off, checks.py refuses to start without a key of its own.

Every failure is a VaultError, an InputError whose message names the setting and what the operator must do:
jobs, pages and the API show it as it is.
"""

from __future__ import annotations

import base64
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from ..engine.errors import InputError

SETTING = "ANONYMIZER_VAULT_KEY"
OLD_SETTING = "ANONYMIZER_VAULT_OLD_KEYS"
GUIDE = "docs/vault.md"
# what `make serve`, the checks and the docs tell the operator to run: any Python, no package needed
MAKE_KEY = "python3 -c 'import base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())'"


class VaultError(InputError):
    """A secret cannot be encrypted or decrypted: no key, a malformed key, or not the key it was stored under.
    The message names the setting and what to do, never a key or a secret."""


def make_key() -> str:
    """A new random Fernet key (what MAKE_KEY prints)."""
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


def is_key(text: str) -> bool:
    """Is ``text`` a Fernet key (32 bytes, url-safe base64)?"""
    try:
        Fernet(text.encode())
    except (ValueError, TypeError, UnicodeError):
        return False
    return True


def secret_key_derived_key(secret_key: str) -> str:
    """The key earlier versions derived from SECRET_KEY (HKDF-SHA-256). Only rotate_vault_key uses it, to read
    what they stored; the vault itself never derives a key from SECRET_KEY."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"anonymizer-vault", info=b"fernet key v1")
    return base64.urlsafe_b64encode(hkdf.derive(secret_key.encode())).decode()


# ---- the keys ---------------------------------------------------------------------------------------------
def development_setup() -> bool:
    """DEBUG on, or SECRET_KEY still the public development key: only then may the development key stand in for
    an unset ANONYMIZER_VAULT_KEY. A server with a SECRET_KEY of its own never encrypts under a key it did not
    choose."""
    return bool(settings.DEBUG) or settings.SECRET_KEY == settings.DEVELOPMENT_SECRET_KEY


def development_key_file() -> Path:
    return Path(settings.ANONYMIZER_VAULT_DEVELOPMENT_KEY_FILE)


def existing_development_key() -> str | None:
    """The development key if its file exists (checks.py refuses it as the production key)."""
    try:
        return development_key_file().read_text(encoding="ascii").strip()
    except (OSError, UnicodeError):
        return None


@lru_cache(maxsize=4)
def _development_key(path: str) -> str:
    file = Path(path)
    if not file.exists():
        try:
            file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".vault-key-")  # 0600
            try:
                with os.fdopen(fd, "w", encoding="ascii") as fh:
                    fh.write(make_key() + "\n")
                os.link(tmp, file)  # all or nothing; when another process was first, its key is the key
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
        except OSError as exc:
            raise VaultError(f"{SETTING} is not set and the development key file {file} cannot be written "
                             f"({exc.strerror}): set {SETTING} ({GUIDE})") from None
    key = existing_development_key()
    if key is None or not is_key(key):
        raise VaultError(f"the development key file {file} does not hold a Fernet key: set {SETTING}, or remove "
                         f"the file to make a new development key (what was stored under it is then lost) "
                         f"({GUIDE})")
    return key


def primary_key() -> str:
    """The key new secrets are encrypted under: ANONYMIZER_VAULT_KEY, or the development key in a development
    setup. VaultError when there is none or it is malformed."""
    key = (getattr(settings, SETTING, "") or "").strip()
    if not key:
        if not development_setup():
            raise VaultError(f"{SETTING} is not set: the server has no key for the secrets it stores (pseudonymization "
                             f"keys, re-identification tables, connection tokens, saved passwords). The operator "
                             f"must set it to the key they were stored under ({GUIDE})")
        return _development_key(str(development_key_file()))
    if not is_key(key):
        raise VaultError(f"{SETTING} is not a valid Fernet key (32 random bytes in url-safe base64): the operator "
                         f"must set a key made by {MAKE_KEY} ({GUIDE})")
    return key


def old_keys() -> list[str]:
    """The keys of ANONYMIZER_VAULT_OLD_KEYS, in order; VaultError naming the position of a malformed one."""
    keys = [k.strip() for k in (getattr(settings, OLD_SETTING, ()) or ()) if k.strip()]
    for i, key in enumerate(keys, 1):
        if not is_key(key):
            raise VaultError(f"{OLD_SETTING}: key {i} of {len(keys)} is not a valid Fernet key (32 random bytes in "
                             f"url-safe base64) ({GUIDE})")
    return keys


@lru_cache(maxsize=8)
def _ring(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(k.encode()) for k in keys])


def fernet(extra: tuple[str, ...] = ()) -> MultiFernet:
    """The primary key first (it encrypts), then the old keys and ``extra`` (they only decrypt)."""
    return _ring((primary_key(), *old_keys(), *extra))


# ---- encrypting and decrypting ---------------------------------------------------------------------------
def not_decryptable(what: str) -> VaultError:
    return VaultError(f"{what} cannot be decrypted with the server's vault key: it was stored under another key. "
                      f"The operator must set {SETTING} back to that key, or add that key to {OLD_SETTING} "
                      f"({GUIDE})")


def encrypt(data: bytes) -> bytes:
    return fernet().encrypt(data)


def decrypt(token: bytes, what: str = "a stored secret") -> bytes:
    """The plaintext; VaultError naming ``what`` (e.g. "the pseudonymization key 'k1'") when no configured key
    opens it (another key, or altered bytes)."""
    try:
        return fernet().decrypt(token)
    except InvalidToken:
        raise not_decryptable(what) from None


def encrypt_text(text: str) -> str:
    return encrypt(text.encode()).decode("ascii")


def decrypt_text(token: str, what: str = "a stored secret") -> str:
    try:
        raw = token.encode("ascii")
    except (AttributeError, UnicodeError):
        raise not_decryptable(what) from None
    return decrypt(raw, what).decode()
