"""Release policies in the database: saved from a job, imported from a file, exported, and applied to a
dataset. Applying sets the dataset's columns from the policy (roles, types, hierarchies) and creates the job
through anonymizer_app.services.jobs.create_job, as the run form does: one job, one RunSpec, one pipeline and
its publishing gate. Every release under a policy is recorded (Release) in order."""

from __future__ import annotations

import csv
import io

import pandas as pd
from django.db import transaction
from django.db.models import Max

from anonymizer_app.engine import InputError, Role
from anonymizer_app.engine.measure.risk.sdc_weights import weight_problem
from anonymizer_app.models import Dataset, Job, max_length
from anonymizer_app.services import datasets, preflight, synthesis
from anonymizer_app.services import jobs as job_service
from hierarchy_editor.models import Hierarchy, fit_name

from . import policy_file, synthesis_step
from .models import Policy, PolicyVersion, Release
from .policy_file import PolicyError

NAME_MAX = max_length(Policy, "name")


# ---- from a job ----------------------------------------------------------------------------------
def policy_from_job(job: Job, name: str = "", description: str = "") -> dict:
    """The policy file of a job's run configuration (validated): the columns' roles and types, the hierarchies
    the run used (their rows), the algorithm and its options, k, the suppression limit, the privacy models and
    the publishing option."""
    config = job.config or {}
    if job.kind == Job.SYNTHESIS:
        return _synthesis_policy(job, name, description)
    if job.kind not in (Job.RUN, Job.LATTICE_KEEP):
        raise PolicyError(f"a policy is saved from a run or a synthetic set; this job is a {job.get_kind_display()}")
    if config.get("population"):
        raise PolicyError("a policy holds runs on one table; this run matched a research subset into a population")
    if config.get("layout") == "transactions" or config.get("set_column"):
        raise PolicyError("a policy holds table runs; set-valued runs (k^m) are not kept in policies yet")
    hierarchical = {m.get("column") for m in job.models or [] if m.get("distance") == "hierarchical"}
    columns = []
    for c in config.get("columns", []):
        hierarchy = None
        if c["role"] == Role.QUASI_IDENTIFYING.value or c["name"] in hierarchical:
            hierarchy = _embedded(job, c)
        columns.append({"name": c["name"], "role": c["role"], "type": c["type"], "hierarchy": hierarchy})
    options = dict(job.options or {})
    suppressed_rows = options.pop("suppressed_rows", "remove")
    sdc, sdc_seed = options.pop("sdc", None), options.pop("sdc_seed", 0)  # SDC steps: the policy's own fields
    data = {
        "format": policy_file.FORMAT, "version": policy_file.VERSION, "name": name, "description": description,
        "columns": columns, "algorithm": job.algorithm, "options": options, "k": job.k,
        "suppression_limit": job.suppression_limit, "sensitive": job.sensitive or None,
        "models": list(job.models or []), "publishing": {"suppressed_rows": suppressed_rows},
        "identifiers": list(config.get("identifiers", [])),
    }
    if any(c["role"] == Role.PERSON.value for c in columns):  # the person id's run: its adversary too
        data["person_adversary"] = job.person_adversary
    if sdc:
        data.update(sdc=sdc, sdc_seed=sdc_seed)
    return policy_file.validate(data, f"job {job.pk}")


def _synthesis_policy(job: Job, name: str, description: str) -> dict:
    """The policy file of a synthetic set: the dataset's columns (roles, types; the hierarchies of the columns
    drawn, which discretize them) and the synthesis step as the job recorded it (policies/synthesis_step.py)."""
    spec = (job.options or {}).get("synthesis")
    if not spec:
        raise PolicyError(f"job {job.pk} recorded no synthesis settings")
    drawn = set(spec["columns"])
    columns = [{"name": c["name"], "role": c["role"], "type": c["type"],
                "hierarchy": _embedded(job, c) if c["name"] in drawn else None}
               for c in (job.config or {}).get("columns", [])]
    data = {"format": policy_file.FORMAT, "version": policy_file.VERSION, "name": name, "description": description,
            "columns": columns, "synthesis": synthesis_step.from_spec(spec)}
    return policy_file.validate(data, f"job {job.pk}")


def with_latest_run(owner, name: str, config: dict) -> dict:
    """A synthesis-only policy joined to the anonymization of the owner's policy ``name``'s latest version
    (the synthesis beside the run: both are applied); PolicyError when there is none to join."""
    policy = Policy.objects.filter(owner=owner, name=(name or "").strip()).first()
    latest = policy.latest if policy is not None else None
    if latest is None or not policy_file.anonymizes(latest.config):
        raise PolicyError(f"name: the policy {name!r} has no version with an anonymization to keep beside the "
                          f"synthesis")
    if [c["name"] for c in latest.config["columns"]] != [c["name"] for c in config["columns"]]:
        raise PolicyError(f"the policy {name!r} names other columns than this synthetic set's dataset")
    joined = dict(latest.config, synthesis=config["synthesis"])
    return policy_file.validate(joined, f"{name} with the synthesis")


def _embedded(job: Job, column: dict) -> dict | None:
    snapshot = column.get("hierarchy_snapshot")
    if snapshot:
        content, delimiter, on_conflict, name = (snapshot["content"], snapshot["delimiter"],
                                                 snapshot.get("on_conflict", "error"), snapshot["name"])
    elif column.get("hierarchy"):
        h = Hierarchy.objects.filter(pk=column["hierarchy"], owner=job.owner).first()
        if h is None:
            return None
        content, delimiter, on_conflict, name = h.content, h.delimiter, h.on_conflict, h.name
    else:
        return None  # the engine's default, built from the data of each run
    return {"name": name, "on_conflict": on_conflict, "rows": policy_file.rows_of_text(content, delimiter)}


# ---- versions ------------------------------------------------------------------------------------
def _clean_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise PolicyError("name: give the policy a name")
    if len(name) > NAME_MAX:
        raise PolicyError(f"name: at most {NAME_MAX} characters, got {len(name)}")
    return name


@transaction.atomic
def add_version(owner, name: str, config: dict, description: str = "", job: Job | None = None) -> PolicyVersion:
    """A new version of the owner's policy ``name`` (the policy created at its first version)."""
    name = _clean_name(name)
    policy, _ = Policy.objects.select_for_update().get_or_create(owner=owner, name=name,
                                                                 defaults={"description": description})
    if description and description != policy.description:
        policy.description = description
        policy.save(update_fields=["description"])
    number = (policy.versions.aggregate(n=Max("number"))["n"] or 0) + 1
    stored = dict(config, name=name, description=policy.description)
    return PolicyVersion.objects.create(policy=policy, number=number, config=stored, source_job=job)


def save_from_job(job: Job, name: str, description: str = "", alongside: bool = False) -> PolicyVersion:
    """A new version from a finished run or synthetic set; ``alongside`` (a synthetic set): the version keeps
    the anonymization of the policy's latest version, and applying it runs both."""
    config = policy_from_job(job, name, description)
    if alongside:
        if job.kind != Job.SYNTHESIS:
            raise PolicyError("alongside: a synthetic set is saved beside a policy's anonymization, not a run")
        config = with_latest_run(job.owner, name, config)
    return add_version(job.owner, name, config, description, job)


def import_policy(owner, text: str | bytes, filename: str = "policy file", name: str = "", k: int | None = None,
                  dataset: Dataset | None = None) -> PolicyVersion:
    """A policy file read strictly (PolicyError naming the field and value); saved under ``name`` or its own.
    Amnesia's anonymization rules (recognized by their first line) need ``k``; ``dataset`` gives the roles and
    types of the table's other columns (docs/policies.md)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise PolicyError(f"{filename}: not UTF-8 text (byte {exc.start})") from None
    if policy_file.is_amnesia_rules(text):
        if k is None:
            raise PolicyError(f"{filename}: Amnesia's anonymization rules do not hold k: give k")
        config = policy_file.from_amnesia_rules(text, k, 0.0, _other_columns(dataset, text, filename),
                                                name, filename)
    else:
        config = policy_file.loads(text, filename)
    return add_version(owner, name or config.get("name") or "", config, config.get("description", ""))


def _other_columns(dataset: Dataset | None, text: str, filename: str) -> list[dict]:
    """The dataset's columns as policy columns (no hierarchy); a quasi-identifier without rules is refused."""
    if dataset is None:
        return []
    ruled = {c["name"] for c in policy_file.from_amnesia_rules(text, 1, where=filename)["columns"]}
    out = []
    for c in dataset.columns.all():
        if c.name in ruled:
            continue
        if c.role == Role.QUASI_IDENTIFYING.value:
            raise PolicyError(f"{filename}: {c.name!r} is a quasi-identifier of {dataset.name} but the rules do not "
                              f"cover it: make it another role on the columns page, or export its rules too")
        out.append({"name": c.name, "role": c.role, "type": c.type, "hierarchy": None})
    return out


def export_text(version: PolicyVersion) -> str:
    config = dict(version.config, name=version.policy.name, description=version.policy.description)
    return policy_file.dumps(policy_file.validate(config))


# ---- applying ------------------------------------------------------------------------------------
def schema_report(dataset: Dataset, config: dict) -> policy_file.SchemaReport:
    """The dataset against the policy, before any run: missing/extra columns, types, new values."""
    cols = list(dataset.columns.all())
    wanted = [c["name"] for c in config["columns"] if c["hierarchy"] and any(x.name == c["name"] for x in cols)]
    frame = datasets.load_frame(dataset, columns=wanted) if wanted else pd.DataFrame()
    return policy_file.schema_report(config, [c.name for c in cols], {c.name: c.inferred_type for c in cols},
                                     lambda name: frame[name])


def _check_keys(owner, config: dict, label: str) -> None:
    """Every pseudonymization key a rule names is one of the owner's keys (by id), before anything changes."""
    from django.apps import apps

    named = sorted({str(r["key"]) for r in config.get("identifiers", []) if r.get("key")})
    if not named:
        return
    try:
        model = apps.get_model("anonymizer_app", "PseudonymKey")
    except LookupError:
        raise PolicyError(f"{label}: pseudonymization keys are not available in this installation") from None
    mine = {str(pk) for pk in model.objects.filter(owner=owner).values_list("pk", flat=True)}
    missing = [k for k in named if k not in mine]
    if missing:
        raise PolicyError(f"{label}: the pseudonymization key {missing[0]!r} its rules name is not one of your keys "
                          f"(create or choose a key on the identifiers page and save the policy again)")


def _hierarchy_text(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, delimiter=";", lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _stored_hierarchy(owner, label: str, h: dict, column: str) -> Hierarchy:
    """The owner's hierarchy holding exactly these rows (reused when the same text was stored before)."""
    text = _hierarchy_text(h["rows"])
    name = fit_name(label)
    found = Hierarchy.objects.filter(owner=owner, name=name, content=text, delimiter=";",
                                     on_conflict=h["on_conflict"]).first()
    if found is not None:
        return found
    obj = Hierarchy.from_text(owner, name, text, source_name=f"{label}.csv", on_conflict=h["on_conflict"],
                              delimiter=";")
    obj.source_format = "policy"
    obj.save()
    return obj


def apply_policy(dataset: Dataset, version: PolicyVersion, on_new_values: str = policy_file.STOP) -> Job:
    """The first job of ``version`` on ``dataset`` (apply_jobs: the run, or the synthesis of a policy without one)."""
    return apply_jobs(dataset, version, on_new_values)[0]


@transaction.atomic
def apply_jobs(dataset: Dataset, version: PolicyVersion, on_new_values: str = policy_file.STOP) -> list[Job]:
    """The jobs of ``version`` on ``dataset`` (queued by the caller; the run first, then the synthesis) and a
    Release for each. Blocking differences, and new values with ``stop``, raise PolicyError and change nothing;
    with ``extend`` the hierarchies get the new values (policy_file.extend_rows). The dataset's columns take the
    policy's roles, types and hierarchies, then the run is created by the run form's service (create_job: the same
    checks, the same snapshot) and the synthesis by the synthesis form's (create_synthesis_job: the same checks,
    a DP method's ε charged to the dataset's ledger, refused past its budget). Any refusal changes nothing."""
    if version.policy.owner_id != dataset.owner_id:
        raise PolicyError("the policy and the dataset belong to different accounts")
    if dataset.layout != Dataset.TABLE:
        raise PolicyError(f"{dataset.name}: a policy applies to a table, not to a transaction file")
    config = policy_file.validate(version.config)
    _check_keys(dataset.owner, config, label=f"{version.policy.name} v{version.number}")
    report = schema_report(dataset, config)
    config = policy_file.resolve(config, report, on_new_values)
    extended = {nv["column"] for nv in report.new_values}
    label = f"{version.policy.name} v{version.number}"
    by_name = {c["name"]: c for c in config["columns"]}
    for c in config["columns"]:  # a sampling weight is checked as the columns page checks it
        if c["role"] == Role.WEIGHT.value and c["name"] in datasets.dataset_columns(dataset):
            problem = weight_problem(datasets.distinct_values(dataset, c["name"]), c["name"],
                                     datasets.load_frame(dataset, [c["name"]])[c["name"]])
            if problem is not None:
                raise PolicyError(f"{label} on {dataset.name}: {problem}")
    rules = {r["column"]: {k: v for k, v in r.items() if k != "column"} for r in config.get("identifiers", [])}
    for column in dataset.columns.all():
        spec = by_name[column.name]
        column.role, column.type = spec["role"], spec["type"]
        column.hierarchy = None
        if spec["hierarchy"] is not None:
            suffix = f" extended for {dataset.name}" if column.name in extended else ""
            column.hierarchy = _stored_hierarchy(dataset.owner, f"{label}: {column.name}{suffix}",
                                                 spec["hierarchy"], column.name)
        # the dataset's identifiers page then shows the policy's treatments (removal is stored as no rule)
        rule = rules.get(column.name, {})
        column.identifier_rule = rule if rule.get("treatment", "remove") != "remove" else {}
        column.save(update_fields=["role", "type", "hierarchy", "identifier_rule"])
    made = [_run_job(dataset, config, label)] if policy_file.anonymizes(config) else []
    if policy_file.synthesizes(config):
        made.append(_synthesis_job(dataset, config, label))
    for job in made:
        number = (version.policy.releases.aggregate(n=Max("number"))["n"] or 0) + 1
        Release.objects.create(policy=version.policy, version=version, job=job, number=number)
    return made


def _synthesis_job(dataset: Dataset, config: dict, label: str) -> Job:
    """The policy's synthesis on the dataset, as the synthesis form creates it (services/synthesis.py)."""
    try:
        return synthesis.create_synthesis_job(dataset, dataset.owner, synthesis_step.spec_data(config["synthesis"]))
    except InputError as exc:  # the form's messages name the field; the ledger's refusal names the budget
        text = str(exc)
        field = "synthesis.epsilon" if text.startswith("refused:") else "synthesis"
        raise PolicyError(f"{label} on {dataset.name}: {field}: {text}") from None


def _run_job(dataset: Dataset, config: dict, label: str) -> Job:
    """The policy's anonymization on the dataset, as the run form creates it (services/jobs.create_job)."""
    options = dict(config["options"])
    if config["publishing"]["suppressed_rows"] != "remove":  # kept with the job's options, as the run form does
        options["suppressed_rows"] = config["publishing"]["suppressed_rows"]
    if config.get("sdc"):  # SDC steps after the recoding travel with the job's options, as the run form's
        options.update(sdc=config["sdc"], sdc_seed=config.get("sdc_seed", 0))
    # the run form's pre-flight checks (k above the records, uncovered values, infeasible models, DICOM roles)
    problems = preflight.check_run(dataset, config["algorithm"], config["k"], config["suppression_limit"],
                                   config["models"])
    if problems:
        raise PolicyError(f"{label} on {dataset.name}: " + "; ".join(p.message for p in problems))
    try:
        job = job_service.create_job(dataset, config["algorithm"], config["k"], config["suppression_limit"],
                                     config["sensitive"] or "", options, config["models"],
                                     person_adversary=policy_file.person_adversary(config))
    except InputError as exc:
        raise PolicyError(f"{label} on {dataset.name}: {exc}") from None
    # the identifying columns' treatments are the policy's, whatever rules the dataset's columns had
    if config["identifiers"]:
        job.config["identifiers"] = config["identifiers"]
    else:
        job.config.pop("identifiers", None)
    job.save(update_fields=["config"])
    return job
