"""Identifying columns' treatments in the web app: the key ring (named pseudonymization keys of a user), the
columns' rules, the secrets handed to the engine, and the encrypted re-identification tables.

- A key's secret (32 random bytes, or a hex secret the user enters) is stored only as the vault's token
  (services/vault.py); it is shown once, in the response that creates it, and never again. Jobs, policies,
  reports and exports name a key by its id (the rule's ``key``), never by its secret.
- A column's rule (Column.identifier_rule) is snapshotted into the job (``config["identifiers"]``, the
  engine's rule dicts, as release policies store them); ``config["reidentification_table"]`` asks for the
  result's value -> token table, kept encrypted (ReidentificationTable) and downloadable only by the owner
  after re-entering the password.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import replace

from django.db import transaction

from ..engine import InputError
from ..engine.model.table import Role
from ..engine.run import identifiers as id_rules
from ..engine.run.spec import RunSpec
from ..models import Column, Dataset, Job, PseudonymKey, ReidentificationTable
from . import vault
from .exports import neutralize

SECRET_BYTES = 32
# the roles whose columns leave the product only through a rule (engine Table.identifying): identifying columns
# and the person id (a keyed pseudonym of the person id keeps a person's records linkable in the release)
TREATED_ROLES = (Role.IDENTIFYING.value, Role.PERSON.value)
MIN_ENTERED_BYTES = 16


def parse_secret(text: str) -> bytes:
    """An entered secret: hex digits (blanks ignored), at least 16 bytes."""
    cleaned = "".join(text.split())
    try:
        secret = bytes.fromhex(cleaned)
    except ValueError:
        raise InputError("the secret must be hexadecimal digits (0-9, a-f)") from None
    if len(secret) < MIN_ENTERED_BYTES:
        raise InputError(f"the secret must be at least {MIN_ENTERED_BYTES} bytes ({2 * MIN_ENTERED_BYTES} hex "
                         f"digits), got {len(secret)}")
    return secret


def create_key(owner, name: str, entered: str = "") -> tuple[PseudonymKey, bytes]:
    """A new key of ``owner``: the entered hex secret, or 32 random bytes. Returns the key and its secret (to
    show once)."""
    name = name.strip()
    if not name:
        raise InputError("give the key a name")
    if PseudonymKey.objects.filter(owner=owner, name=name).exists():
        raise InputError(f"you already have a key named {name!r}")
    secret = parse_secret(entered) if entered.strip() else secrets.token_bytes(SECRET_BYTES)
    key = PseudonymKey.objects.create(owner=owner, name=name, secret=vault.encrypt_text(secret.hex()))
    return key, secret


def key_secret(key: PseudonymKey) -> bytes:
    """The key's secret; a VaultError (an InputError naming ANONYMIZER_VAULT_KEY) when the vault cannot open it."""
    return bytes.fromhex(vault.decrypt_text(key.secret, f"the pseudonymization key {key.name!r}"))


def policies_using(key: PseudonymKey) -> list[str]:
    """Names of the owner's release policies with a version whose rules name ``key``."""
    try:
        from policies.models import PolicyVersion
    except ImportError:  # the policies app is optional to this service
        return []
    names = set()
    for version in PolicyVersion.objects.filter(policy__owner=key.owner).select_related("policy"):
        for rule in (version.config or {}).get("identifiers", []) or []:
            if isinstance(rule, dict) and str(rule.get("key")) == str(key.pk):
                names.add(version.policy.name)
    return sorted(names)


def columns_using(key: PseudonymKey) -> list[Column]:
    return [c for c in Column.objects.filter(dataset__owner=key.owner, role__in=TREATED_ROLES)
            .select_related("dataset") if str((c.identifier_rule or {}).get("key")) == str(key.pk)]


def delete_key(key: PseudonymKey) -> None:
    """Delete a key; the columns naming it go back to removal (their rule would name a missing key)."""
    with transaction.atomic():
        for column in columns_using(key):
            column.identifier_rule = {}
            column.save(update_fields=["identifier_rule"])
        key.delete()


# ---- columns' rules -----------------------------------------------------------------------------------
def column_rule(column: Column) -> id_rules.IdentifierRule | None:
    """The engine rule of an identifying or person-id column, None when it is removed."""
    data = dict(column.identifier_rule or {})
    if column.role not in TREATED_ROLES or data.get("treatment", id_rules.REMOVE) == id_rules.REMOVE:
        return None
    data["column"] = column.name
    return id_rules.IdentifierRule.from_dict(data)


def save_rule(column: Column, data: dict) -> None:
    """Check and store an identifying or person-id column's rule (a treatment's dict without the column)."""
    if column.role not in TREATED_ROLES:
        raise InputError(f"column {column.name!r} is not identifying: only identifying and person-id columns are "
                         f"treated")
    rule = id_rules.IdentifierRule.from_dict({**data, "column": column.name})
    if rule.treatment == id_rules.PSEUDONYM:
        owner = column.dataset.owner
        if not str(rule.key or "").isdigit() or not PseudonymKey.objects.filter(owner=owner, pk=int(rule.key or 0)).exists():
            raise InputError(f"column {column.name!r}: choose one of your pseudonymization keys")
    stored = rule.to_dict()
    stored.pop("column")
    column.identifier_rule = {} if rule.treatment == id_rules.REMOVE else stored
    column.save(update_fields=["identifier_rule"])


def treated_columns(dataset: Dataset) -> list[Column]:
    """The dataset's columns that leave only through a rule (identifying, person id), in the table's order."""
    return list(dataset.columns.filter(role__in=TREATED_ROLES).order_by("position"))


def dataset_rules(dataset: Dataset) -> list[dict]:
    """The rules of the dataset's identifying and person-id columns that are not removed, as a job's config
    holds them."""
    out = []
    for column in treated_columns(dataset):
        rule = column_rule(column)
        if rule is not None:
            out.append(rule.to_dict())
    return out


def snapshot(job: Job, reidentification_table: bool = False) -> None:
    """Copy the dataset's identifier rules into the job (unless a policy gave its own) and the choice of a
    re-identification table."""
    config = dict(job.config or {})
    if config.get("population") or config.get("layout") == "transactions":
        return  # the population's table, or records of items: identifying columns are removed
    if "identifiers" not in config:
        rules = dataset_rules(job.dataset)
        if rules:
            config["identifiers"] = rules
    if reidentification_table and config.get("identifiers"):
        config["reidentification_table"] = True
    if config != job.config:
        job.config = config
        job.save(update_fields=["config"])


def job_rules(job: Job) -> tuple[id_rules.IdentifierRule, ...]:
    return id_rules.parse_rules((job.config or {}).get("identifiers") or [])


def treats(job: Job) -> bool:
    """Does the job publish an identifying column (a pseudonym, mask or surrogate)?"""
    return any(r.treatment != id_rules.REMOVE for r in job_rules(job))


def describe(job: Job) -> list[dict]:
    """The job's treatments as the job page lists them (a key by its name)."""
    names = {str(k.pk): k.name for k in PseudonymKey.objects.filter(owner=job.owner)}
    out = []
    for rule in job_rules(job):
        text = rule.describe()
        if rule.treatment == id_rules.PSEUDONYM:
            text = text.replace(f"under key {rule.key}", f"under key {names.get(str(rule.key), '(deleted)')!r}")
        out.append({"column": rule.column, "treatment": rule.treatment, "description": text})
    return out


def with_identifiers(job: Job, spec: RunSpec) -> RunSpec:
    """The job's spec with its identifier rules and the secrets of the keys they name (the owner's keys only)."""
    rules = job_rules(job)
    if not rules:
        return spec
    keys: dict[str, bytes] = {}
    for rule in rules:
        if rule.treatment != id_rules.PSEUDONYM:
            continue
        ref = str(rule.key)
        key = PseudonymKey.objects.filter(owner=job.owner, pk=int(ref)).first() if ref.isdigit() else None
        if key is None:
            raise InputError(f"identifier column {rule.column!r}: its pseudonymization key no longer exists; "
                             f"choose another key on the dataset's identifiers page")
        keys[ref] = key_secret(key)
    return replace(spec, identifiers=rules, pseudonym_keys=keys)


# ---- re-identification tables -------------------------------------------------------------------------
def store_reidentification(job: Job, mapping: dict[str, dict[str, str]]) -> None:
    """Keep the result's value -> token table, encrypted, when the job asked for it."""
    if not (job.config or {}).get("reidentification_table") or not mapping:
        return
    ReidentificationTable.objects.update_or_create(job=job, defaults={"data": vault.encrypt_text(json.dumps(mapping))})


def reidentification_csv(table: ReidentificationTable) -> str:
    """column,original,pseudonym lines (formulas neutralized, as every download)."""
    import csv
    import io

    mapping = json.loads(vault.decrypt_text(table.data, "the re-identification table of this result"))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["column", "original", "pseudonym"])
    for column, pairs in mapping.items():
        for value, token in sorted(pairs.items()):
            writer.writerow([neutralize(column), neutralize(value), neutralize(token)])
    return out.getvalue()
