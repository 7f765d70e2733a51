"""Edit and re-run: the run form's values read back from a job (algorithm, k, suppression, the sensitive
column, every privacy model with its parameters, the algorithm's options, the publishing option), and the
job's models as the pages list them. The advice on a poor result links to the run form with some of
these values changed (``?from=<job>&algorithm=mondrian``): the changes are form field names."""

from __future__ import annotations

from ..engine import ALGORITHMS
from ..engine.privacy import PRIVACY_MODELS, model_groups
from ..engine.sdc import METHODS
from ..models import Job
from .population import RESEARCH_MARKER


def _field(group: str, name: str) -> str:
    # the run form's name of a model field (forms.model_field_name; not imported: forms import services)
    return f"model:{group}:{name}"


def run_form_initial(job: Job, changes: dict[str, str] | None = None) -> dict:
    """The run form's initial values for running ``job`` again; ``changes`` (form field name -> value)
    override them. Unknown models or options (a registry entry removed since) are left out."""
    initial: dict = {
        "algorithm": job.algorithm,
        "k": job.k,
        # %g keeps 12.5 as 12.5 and 2 as 2 (the stored share is a float: 0.125 * 100 may read 12.500000000000002)
        "suppression_percent": float(f"{job.suppression_limit * 100:.10g}"),
        "sensitive": job.sensitive,
    }
    if job.person_adversary != "class":  # with a person id: what the adversary knew of a person
        initial["person_adversary"] = job.person_adversary
    options = dict(job.options or {})
    if options.pop("suppressed_rows", None) == "keep":
        initial["suppressed_rows"] = "keep"
    info = ALGORITHMS.get(job.algorithm)
    if info is not None:
        known = {p.name for p in info.options}
        for name, value in options.items():
            if name in known:
                initial[f"option:{info.name}:{name}"] = value
    for step in options.get("sdc") or []:  # SDC steps: sdc_forms.sdc_field_name's names
        if step.get("method") in METHODS:
            initial[f"sdc:{step['method']}:enabled"] = True
            for name, value in (step.get("parameters") or {}).items():
                initial[f"sdc:{step['method']}:{name}"] = value
    if options.get("sdc"):
        initial["sdc_seed"] = options.get("sdc_seed", 0)
    groups = {cls.name: group for group in model_groups() for cls in group.models}
    population = (job.config or {}).get("population")
    for spec in job.models or []:
        group = groups.get(spec.get("model", ""))
        if group is None:
            continue
        key = group.key
        initial[_field(key, "enabled")] = True
        cls = PRIVACY_MODELS[spec["model"]]
        if group.has_variants:
            initial[_field(key, "variant")] = cls.variant_name or cls.name
        for param in cls.parameters:
            if param.name in spec:
                value = spec[param.name]
                # a whole number stored as a float (entropy l = 2.0) reads "2" in the form, as everywhere else
                initial[_field(key, param.name)] = int(value) if isinstance(value, float) and value.is_integer() \
                    else value
        column = spec.get("column")
        if column == RESEARCH_MARKER and population:  # δ-presence against another dataset of the owner
            initial[_field(key, "population")] = population.get("dataset")
        elif column is not None and group.column_source is not None:
            initial[_field(key, "column")] = column
    if (job.config or {}).get("reidentification_table"):
        initial["reidentification_table"] = True
    initial.update(changes or {})
    return initial


def set_form_initial(job: Job, library: list) -> dict | None:
    """The set-valued column's part of the run form from a mixed-mode job: m, the set algorithm, and the item
    hierarchy of the library whose text is the one the job kept (None when it was changed or deleted since)."""
    sc = (job.config or {}).get("set_column")
    if not sc:
        return None
    initial = {"m": sc.get("m"), "set_algorithm": sc.get("algorithm")}
    kept = sc.get("item_hierarchy")
    if kept:
        same = next((h for h in library if h.content == kept.get("content") and h.name == kept.get("name")), None)
        initial["item_hierarchy"] = same.pk if same is not None else None
    return initial


def model_rows(specs: list[dict] | None, population_name: str | None = None) -> list[dict]:
    """One row per privacy model of a job (k is the job's own): its label and its parameters as
    (name, value) pairs, the column it applies to last."""
    rows = []
    for spec in specs or []:
        cls = PRIVACY_MODELS.get(spec.get("model", ""))
        label = cls.label if cls is not None else spec.get("model", "")
        labels = {p.name: p.field_label for p in cls.parameters} if cls is not None else {}
        params = [{"name": labels.get(name, name), "value": _shown(value)}
                  for name, value in spec.items() if name not in ("model", "column")]
        column = spec.get("column")
        if column == RESEARCH_MARKER:
            column = f"the research subset within {population_name}" if population_name else "the research subset"
        rows.append({"model": spec.get("model", ""), "label": label, "params": params, "column": column})
    return rows


def models_text(specs: list[dict] | None) -> str:
    """The models in one line, as the jobs list shows them ("distinct l-diversity (l=3) on disease")."""
    parts = []
    for row in model_rows(specs):
        params = ", ".join(f"{p['name']}={p['value']}" for p in row["params"])
        parts.append(row["label"] + (f" ({params})" if params else "") + (f" on {row['column']}" if row["column"] else ""))
    return "; ".join(parts)


def _shown(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
