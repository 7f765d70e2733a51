"""Every secret stored encrypted by the vault (services/vault.py), found and re-encrypted under the current key:
what ``manage.py rotate_vault_key`` does (docs/vault.md).

The kinds, each read where the code stores it:
- pseudonymization keys (PseudonymKey.secret), re-identification tables (ReidentificationTable.data),
  repository connections' tokens (RemoteAccount.token_encrypted), passwords kept for SQL re-imports
  (Dataset.sql_source["password"]), m-invariance id secrets of policy releases (policies Release.state["secret"]):
  rows, each table in one transaction, locked while it is rewritten;
- the UID keys of DICOM datasets (manifest.json beside the dataset's files, "uid_key"): files, each replaced
  whole (written under a temporary name, then renamed);
- m-invariance state files of the CLI (``anonymize --history FILE``), when named: files, as above.

A token already under the current key is left as it is, so a second run changes nothing (idempotent). A token
no configured key opens is left as it is and reported by kind and id, never with its content.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.apps import apps
from django.db import transaction
from django.db.models import QuerySet

from . import dicom, storage, vault
from .republication import STATE_FORMAT


@dataclass
class Count:
    """What one kind held: tokens already under the current key, re-encrypted (or, checking, under an old key),
    and the objects whose token no configured key opens."""

    kind: str
    current: int = 0
    rotated: int = 0
    unreadable: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.current + self.rotated + len(self.unreadable)


class Rotator:
    """Re-encrypts tokens under the current key; ``check`` only reads. ``extra`` keys only decrypt (the key earlier
    versions derived from SECRET_KEY, for rotate_vault_key --from-secret-key)."""

    def __init__(self, check: bool = False, extra: tuple[str, ...] = ()):
        self.check = check
        self.current = Fernet(vault.primary_key().encode())
        self.ring: MultiFernet = vault.fernet(extra)

    def rotate(self, token: object, count: Count, name: str) -> str | None:
        """The token re-encrypted under the current key; None when it needs no change (already current, only
        checking, or unreadable: then counted under ``name``)."""
        raw = token.encode("ascii", "replace") if isinstance(token, str) else b""
        try:
            self.current.decrypt(raw)
        except InvalidToken:
            pass
        else:
            count.current += 1
            return None
        try:
            plain = self.ring.decrypt(raw)
        except InvalidToken:
            count.unreadable.append(name)
            return None
        count.rotated += 1
        return None if self.check else self.current.encrypt(plain).decode("ascii")

    # ---- rows -------------------------------------------------------------------------------------------
    def rows(self, kind: str, queryset: QuerySet, get: Callable[[Any], object], put: Callable[[Any, str], list[str]],
             name: Callable[[Any], str]) -> Count:
        """One table in one transaction (its rows locked while they are rewritten: a page saving a secret at the
        same moment waits, and nothing is half rotated if this stops). ``get``, ``put`` and ``name`` take a row of
        ``queryset``'s model (Any: each table's own)."""
        count = Count(kind)
        with transaction.atomic():
            rows = queryset if self.check else queryset.select_for_update()
            for obj in rows.order_by("pk"):
                new = self.rotate(get(obj), count, name(obj))
                if new is not None:
                    obj.save(update_fields=put(obj, new))
        return count

    # ---- files ----------------------------------------------------------------------------------------------
    def json_file(self, path: Path, key: str, count: Count, name: str, indent: int | None = None) -> None:
        """The token under ``key`` of a JSON object file, the file replaced whole when it changes."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            count.unreadable.append(f"{name} (not a readable JSON file)")
            return
        if not isinstance(data, dict) or key not in data:
            count.unreadable.append(f"{name} (no {key!r})")
            return
        new = self.rotate(data[key], count, name)
        if new is None:
            return
        data[key] = new
        if indent is None:
            storage.write_json(path, data)
        else:  # as the CLI writes its state files (republication_flags): readable, stable order
            tmp = path.with_name(f".{path.name}.rotating")
            tmp.write_text(json.dumps(data, indent=indent, sort_keys=True), encoding="utf-8")
            tmp.replace(path)


# ---- the kinds -------------------------------------------------------------------------------------------
def _model(label: str):
    try:
        return apps.get_model(label)
    except LookupError:  # an app left out of this installation (policies) stores nothing
        return None


def _set(attr: str):
    def put(obj, token: str) -> list[str]:
        setattr(obj, attr, token)
        return [attr]
    return put


def _set_in(attr: str, key: str):
    def put(obj, token: str) -> list[str]:
        value = dict(getattr(obj, attr))
        value[key] = token
        setattr(obj, attr, value)
        return [attr]
    return put


def _in(attr: str, key: str):
    return lambda obj: (getattr(obj, attr) or {}).get(key)


def _release_states(model):
    # a JSON key lookup on every backend (SQLite, PostgreSQL, MariaDB)
    return model.objects.filter(state__format=STATE_FORMAT)


def database_kinds(rotator: Rotator) -> Iterator[Count]:
    PseudonymKey = _model("anonymizer_app.PseudonymKey")
    yield rotator.rows("pseudonymization keys", PseudonymKey.objects.all(), lambda o: o.secret, _set("secret"),
                       lambda o: f"pseudonymization key {o.pk}")
    Table = _model("anonymizer_app.ReidentificationTable")
    yield rotator.rows("re-identification tables", Table.objects.all(), lambda o: o.data, _set("data"),
                       lambda o: f"re-identification table of run {o.job_id}")
    Account = _model("anonymizer_app.RemoteAccount")
    yield rotator.rows("repository connection tokens", Account.objects.all(), lambda o: o.token_encrypted,
                       _set("token_encrypted"), lambda o: f"repository connection {o.pk}")
    Dataset = _model("anonymizer_app.Dataset")
    yield rotator.rows("saved SQL passwords", Dataset.objects.filter(sql_source__has_key="password"),
                       _in("sql_source", "password"), _set_in("sql_source", "password"),
                       lambda o: f"saved SQL password of dataset {o.pk}")
    Release = _model("policies.Release")
    if Release is not None:
        yield rotator.rows("m-invariance release states", _release_states(Release), _in("state", "secret"),
                           _set_in("state", "secret"), lambda o: f"m-invariance state of release {o.pk}")


def dicom_manifests(rotator: Rotator) -> Count:
    count = Count("DICOM UID keys")
    Dataset = _model("anonymizer_app.Dataset")
    for dataset in Dataset.objects.order_by("pk").only("pk"):
        if dicom.is_dicom(dataset):
            rotator.json_file(storage.dicom_dir(dataset) / dicom.MANIFEST, "uid_key", count,
                              f"DICOM manifest of dataset {dataset.pk}")
    return count


def state_files(rotator: Rotator, paths: list[Path]) -> Count:
    count = Count("m-invariance state files")
    for path in paths:
        rotator.json_file(path, "secret", count, f"state file {path}", indent=1)
    return count


def rotate_all(check: bool = False, extra: tuple[str, ...] = (), files: tuple[Path, ...] = ()) -> list[Count]:
    """Every kind, in order (VaultError when the keys themselves are missing or malformed)."""
    rotator = Rotator(check, extra)
    counts = list(database_kinds(rotator))
    counts.append(dicom_manifests(rotator))
    if files:
        counts.append(state_files(rotator, list(files)))
    return counts
