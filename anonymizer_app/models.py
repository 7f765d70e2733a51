"""Datasets, their columns, anonymization jobs and their stored results. Everything has an owner."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from .engine import COLUMN_TYPES, Role

ROLE_CHOICES = [(r.value, r.value) for r in Role]
TYPE_CHOICES = [(t, t) for t in COLUMN_TYPES]


class Dataset(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="datasets")
    name = models.CharField(max_length=200)
    # The uploaded bytes, never modified; the read format below says how to parse them.
    original = models.FileField(upload_to="datasets/")
    original_name = models.CharField(max_length=255)
    size_bytes = models.BigIntegerField(default=0)
    kind = models.CharField(max_length=8, default="csv")  # csv or xlsx
    delimiter = models.CharField(max_length=1, default=",")
    encoding = models.CharField(max_length=32, default="utf-8")
    has_header = models.BooleanField(default=True)
    n_rows = models.PositiveIntegerField(default=0)
    n_columns = models.PositiveIntegerField(default=0)
    is_demo = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)
    # Set-valued data: a table (a column may hold sets, Column.item_delimiter) or a transaction file (one
    # record of items per line, separated by item_delimiter; record_id: the first field is the record's id).
    TABLE, TRANSACTIONS = "table", "transactions"
    LAYOUT_CHOICES = [(TABLE, "table"), (TRANSACTIONS, "transactions")]
    layout = models.CharField(max_length=12, choices=LAYOUT_CHOICES, default=TABLE)
    item_delimiter = models.CharField(max_length=1, blank=True, default="")
    record_id = models.BooleanField(default=False)
    # Imported from a database (services/sql.py): {"url": without the password, "table" or "query",
    # "password": vault-encrypted, only when the user asked to keep it for re-imports}; {} for uploads.
    sql_source = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_transactions(self) -> bool:
        return self.layout == self.TRANSACTIONS

    @property
    def qi_columns(self):
        return self.columns.filter(role=Role.QUASI_IDENTIFYING.value)


class Column(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="columns")
    position = models.PositiveIntegerField()
    name = models.CharField(max_length=255)
    inferred_type = models.CharField(max_length=10, choices=TYPE_CHOICES, default="string")
    type = models.CharField(max_length=10, choices=TYPE_CHOICES, default="string")
    role = models.CharField(max_length=20, choices=ROLE_CHOICES, default=Role.INSENSITIVE.value)
    distinct_count = models.PositiveIntegerField(default=0)
    # None: the default hierarchy built from the data (intervals for numbers, value -> * otherwise).
    hierarchy = models.ForeignKey("hierarchy_editor.Hierarchy", null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="columns")
    # Non-empty: a set-valued column, its cells' items separated by this character (k^m within every class).
    item_delimiter = models.CharField(max_length=1, blank=True, default="")
    # An identifying column's treatment (engine/run/identifiers.py rule without its column; {}: removed). A keyed
    # pseudonym names one of the owner's PseudonymKey ids, never the secret.
    identifier_rule = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["dataset", "name"], name="unique_column_name")]

    def __str__(self) -> str:
        return self.name


class Job(models.Model):
    QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = "queued", "running", "succeeded", "failed", "cancelled"
    STATUS_CHOICES = [(s, s) for s in (QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED)]
    FINISHED = (SUCCEEDED, FAILED, CANCELLED)
    # What the job does; services.jobs.JOB_HANDLERS runs each kind. ``algorithm`` keeps what it always held
    # ("compare" and "homogeneity-experiment" on older comparison and experiment rows), but code decides on kind.
    # LATTICE evaluates the solution lattice of a finished run (options["source_job"]) on a worker; its
    # output is the lattice cache of that run, not a Result.
    # SQL_EXPORT writes a finished run's published rows (options["source_job"]) to a database table
    # (services/sql_jobs.py); ``dataset`` is the run's, its output the table, not a Result.
    RUN, COMPARISON, EXPERIMENT, LATTICE_KEEP, LATTICE = "run", "comparison", "experiment", "lattice-keep", "lattice"
    SQL_EXPORT = "sql-export"
    # REPOSITORY_DEPOSIT makes a new draft on Zenodo or Dataverse of a finished run's published rows
    # (services/remote_jobs.py); options["draft"] names the draft once made.
    REPOSITORY_DEPOSIT = "repository-deposit"
    # MODEL_UTILITY trains models on a finished run's release and on its input (services/model_utility.py);
    # options["source_job"] is the run, its Result's report the figures.
    MODEL_UTILITY = "model-utility"
    # SYNTHESIS draws a synthetic table of the dataset (services/synthesis.py, engine.synthesis): its Result
    # holds the synthetic rows like a run's published rows, and its report ("synthesis") the figures.
    SYNTHESIS = "synthesis"
    # SDC_RISK computes the risk with sampling weights with SUDA2 of a dataset or of a run's result above the risk
    # page's in-request limit (services/sdc_risk_jobs.py): options["sdc_risk"] says what, the Result's report the figures.
    SDC_RISK = "sdc-risk"
    KIND_CHOICES = [(k, k) for k in (RUN, COMPARISON, EXPERIMENT, LATTICE_KEEP, LATTICE, SQL_EXPORT,
                                     REPOSITORY_DEPOSIT, MODEL_UTILITY, SYNTHESIS, SDC_RISK)]

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="jobs")
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=20, choices=KIND_CHOICES, default=RUN)
    algorithm = models.CharField(max_length=40)
    k = models.PositiveIntegerField()
    suppression_limit = models.FloatField(default=0.0)
    sensitive = models.CharField(max_length=255, blank=True)
    options = models.JSONField(default=dict, blank=True)
    # Snapshot of roles, types and hierarchies at submission, so later edits don't change a run.
    config = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=QUEUED)
    progress = models.FloatField(default=0.0)
    phase = models.CharField(max_length=255, blank=True)
    message = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    celery_id = models.CharField(max_length=255, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # Liveness: the worker running the job touches ``heartbeat``; a sweep fails (or requeues) running jobs
    # whose heartbeat is stale. ``attempts`` counts deliveries of the job to a worker.
    heartbeat = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # With a person-id column (Role.PERSON): what the adversary knows of a person, engine/model/persons.ADVERSARIES
    # ("class": one record; "all-records": every record of the person); passed into the job's RunSpec.
    person_adversary = models.CharField(max_length=12, default="class")
    # Privacy models beside k, as engine model.to_dict() ({"model": name, parameters..., "column": c}).
    # Last: the field's name hides the models module in the rest of the class body.
    models = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.algorithm} k={self.k} on {self.dataset}"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def duration(self) -> float | None:
        if self.started and self.finished:
            return (self.finished - self.started).total_seconds()
        return None


class SourceImport(models.Model):
    """A dataset being imported from an outside source on a worker (services/source_imports.py), so that no
    web request waits for a connection or a long read. ``dataset`` is set when it succeeded; a failed or
    cancelled import stores nothing but this row. ``password`` holds the vault's token of a password given
    apart only while the import waits or runs. ``source`` names the kind of source. A repository import (Zenodo,
    Dataverse) keeps the file's download link in ``url``, its name in ``table``, the connection in ``account``
    (or none: a public record, with a token typed for this import only in ``password``), the server in
    ``server`` and the record as given in ``record``; its ``rows``/``total`` count bytes, not rows."""

    SQL, ZENODO, DATAVERSE = "sql", "zenodo", "dataverse"
    SOURCE_CHOICES = [(SQL, "SQL database"), (ZENODO, "Zenodo"), (DATAVERSE, "Dataverse")]
    REPOSITORIES = (ZENODO, DATAVERSE)
    QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = Job.QUEUED, Job.RUNNING, Job.SUCCEEDED, Job.FAILED, Job.CANCELLED
    STATUS_CHOICES = Job.STATUS_CHOICES
    FINISHED = Job.FINISHED

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="source_imports")
    source = models.CharField(max_length=12, choices=SOURCE_CHOICES, default=SQL)
    url = models.CharField(max_length=2000)  # without its password
    table = models.CharField(max_length=255, blank=True)
    query = models.TextField(blank=True)
    name = models.CharField(max_length=200, blank=True)  # the dataset's name asked for ("": the source's)
    keep_password = models.BooleanField(default=False)
    password = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=QUEUED)
    rows = models.PositiveBigIntegerField(default=0)  # read so far
    total = models.PositiveBigIntegerField(null=True, blank=True)  # when the table was counted
    phase = models.CharField(max_length=255, blank=True)
    message = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    celery_id = models.CharField(max_length=255, blank=True)
    # the staged table file while it runs (under MEDIA_ROOT), so that a sweep can remove what a dead worker left
    staging = models.CharField(max_length=255, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    heartbeat = models.DateTimeField(null=True, blank=True)
    dataset = models.ForeignKey(Dataset, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # repository imports: the connection whose token is used (deleting it deletes its imports), the server's
    # root URL and the record as the user named it
    account = models.ForeignKey("RemoteAccount", null=True, blank=True, on_delete=models.CASCADE,
                                related_name="imports")
    server = models.CharField(max_length=200, blank=True)
    record = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        if self.is_repository:
            return f"import of {self.table} from {self.get_source_display()} {self.record}"
        return f"import of {self.table or 'a query'} from {self.url}"

    @property
    def is_repository(self) -> bool:
        return self.source in self.REPOSITORIES

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def label(self) -> str:
        return self.table or "the query"


class Result(models.Model):
    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="result")
    # Anonymized rows in input order (identifiers removed), with a boolean column marking suppression.
    output = models.FileField(upload_to="results/")
    report = models.JSONField(default=dict)  # engine Result.report(), plus chart data
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"result of {self.job}"


class RemoteAccount(models.Model):
    """A user's API token for a research repository (services/remote.py), stored vault-encrypted only;
    ``token_hint`` (its last four characters) is all that is ever shown back."""

    SERVICE_CHOICES = [("zenodo", "Zenodo"), ("dataverse", "Dataverse")]
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="remote_accounts")
    service = models.CharField(max_length=12, choices=SERVICE_CHOICES)
    base_url = models.CharField(max_length=300)
    name = models.CharField(max_length=100)
    token_encrypted = models.TextField()
    token_hint = models.CharField(max_length=8, blank=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["service", "name"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="unique_remote_account_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_service_display()}, {self.base_url})"

    def set_token(self, token: str) -> None:
        from .services import vault

        self.token_encrypted = vault.encrypt_text(token)
        self.token_hint = token[-4:] if len(token) >= 12 else ""

    def token(self) -> str:
        from .services import vault

        return vault.decrypt_text(self.token_encrypted)


class PseudonymKey(models.Model):
    """A named secret of its owner for keyed pseudonyms (HMAC-SHA-256): the role of a per-project secret, shared
    by the datasets and policies that name it so that linked tables keep their join keys. ``secret`` holds
    the vault's token (services/vault.py) of the key's hex, never the key itself; shown once, at creation."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pseudonym_keys")
    name = models.CharField(max_length=100)
    secret = models.TextField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="unique_pseudonym_key_name")]

    def __str__(self) -> str:
        return self.name


class ReidentificationTable(models.Model):
    """A result's original value -> pseudonym/surrogate table, encrypted by the vault (JSON {column: {value:
    token}}); downloadable by the owner after re-entering the password, never part of any export; erased
    with its job."""

    job = models.OneToOneField(Job, on_delete=models.CASCADE, related_name="reidentification")
    data = models.TextField()
    created = models.DateTimeField(auto_now_add=True)


class PrivacyBudget(models.Model):
    """A dataset's total ε budget for differentially private releases (sequential composition: the ε of every
    release of the dataset add up); null: no budget beyond settings.ANONYMIZER_DP_DEFAULT_EPSILON_BUDGET."""

    dataset = models.OneToOneField(Dataset, on_delete=models.CASCADE, related_name="privacy_budget")
    epsilon = models.FloatField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)


class PrivacyLedgerEntry(models.Model):
    """One differentially private release of a dataset and the ε (and δ) it spent. Kept when the release (a
    SafePub run) is deleted: the budget was spent once the release was made."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="privacy_ledger")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    mechanism = models.CharField(max_length=60)
    epsilon = models.FloatField()
    delta = models.FloatField(default=0.0)
    description = models.CharField(max_length=500, blank=True)
    job = models.ForeignKey(Job, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    release = models.JSONField(default=dict, blank=True)  # a histogram's released cells (nothing else stores them)

    class Meta:
        ordering = ["created_at", "id"]


def max_length(model: type[models.Model], name: str) -> int:
    """The most characters the text field ``name`` of ``model`` holds (its max_length)."""
    field = model._meta.get_field(name)
    if not isinstance(field, models.CharField) or field.max_length is None:
        raise TypeError(f"{model.__name__}.{name} is not a text field of bounded length")
    return field.max_length
