"""The state of a sequence of m-invariant releases, at rest: the engine's history (signatures by keyed record
id) and the secret that keys the ids, encrypted by the vault (services/vault.py), never in clear.

The same JSON object is the CLI's ``--history FILE`` and a policy release's ``Release.state``:
``{"format": "m-invariance state v1", "secret": <vault token>, "history": <engine History.to_dict()>}``.
"""

from __future__ import annotations

import secrets

from ..engine.errors import InputError
from ..engine.republication import History
from . import vault

STATE_FORMAT = "m-invariance state v1"


def new_secret() -> bytes:
    return secrets.token_bytes(32)


def state_dict(history: History, secret: bytes) -> dict:
    """The state to store after a release: the history and the encrypted id secret."""
    return {"format": STATE_FORMAT, "secret": vault.encrypt_text(secret.hex()), "history": history.to_dict()}


def load_state(data: object, source: str = "history") -> tuple[History, bytes]:
    """(history, secret) from a stored state; refuses anything else naming ``source``."""
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        raise InputError(f"{source}: not an m-invariance state (expected \"format\": {STATE_FORMAT!r})")
    token = data.get("secret")
    if not isinstance(token, str):
        raise InputError(f"{source}: the m-invariance state has no secret")
    try:
        secret = bytes.fromhex(vault.decrypt_text(token))
    except vault.VaultError as exc:
        raise InputError(f"{source}: {exc}") from None
    except ValueError:
        raise InputError(f"{source}: the m-invariance state's secret is malformed") from None
    return History.from_dict(data.get("history"), source), secret
