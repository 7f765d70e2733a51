"""The policy file (docs/policies.md): validation, the schema differences of a table against a policy, the
hierarchy extension for new values, and the engine's parts of a run (roles, types, hierarchies, models,
options) built from it. No database here: the CLI applies a policy file without one, the web app and the API
through policies/services.py; all three then build one RunSpec and run the one pipeline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

from anonymizer_app import engine
from anonymizer_app.engine import InputError, Role
from anonymizer_app.engine.io import json_limits
from anonymizer_app.engine.model.hierarchy import CONFLICT_POLICIES, Hierarchy
from anonymizer_app.engine.model.missing import is_marker
from anonymizer_app.engine.model.persons import ADVERSARIES
from anonymizer_app.engine.model.table import COLUMN_TYPES
from anonymizer_app.engine.run.identifiers import IdentifierRule
from anonymizer_app.engine.run.spec import SUPPRESSED_ROWS
from anonymizer_app.engine.sdc.steps import SdcStep, steps_from_json

FORMAT = "anonymizer-policy"
VERSION = 1
OTHER = "(other)"  # the node new values are grouped under when a hierarchy is extended
EXTEND, STOP = "extend", "stop"
ON_NEW_VALUES = (EXTEND, STOP)
MAX_LISTED = 10

TOP_FIELDS = {"format", "version", "name", "description", "columns", "algorithm", "options", "k",
              "suppression_limit", "sensitive", "person_adversary", "models", "publishing", "identifiers", "sdc",
              "sdc_seed", "synthesis"}
# what only an anonymization reads: a synthesis-only policy (no algorithm, no k) holds none of them
RUN_FIELDS = ("algorithm", "options", "k", "suppression_limit", "sensitive", "person_adversary", "models",
              "publishing", "identifiers", "sdc", "sdc_seed")
COLUMN_FIELDS = {"name", "role", "type", "hierarchy"}
HIERARCHY_FIELDS = {"name", "on_conflict", "rows"}
ROLES = tuple(r.value for r in Role)
DEFAULT_ADVERSARY = "class"  # RunSpec.person_adversary's default
# words a pseudonymization rule may not carry: a rule names its key, it never holds one
SECRET_WORDS = ("secret", "password", "passphrase", "key_material", "hmac_key")


class PolicyError(InputError):
    """A policy file that cannot be used; the message names the field and the value."""


# ---- validation ----------------------------------------------------------------------------------
def loads(text: str | bytes, where: str = "policy file") -> dict:
    """A policy from its JSON text, validated (PolicyError naming the field otherwise)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise PolicyError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = json_limits.loads(text, where)  # a policy is 5 deep; deeper would make the decoder recurse
    except json_limits.JsonLimitError as exc:
        raise PolicyError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise PolicyError(f"{where}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    return validate(data, where)


def dumps(policy: dict) -> str:
    """The file's text: keys in a fixed order, UTF-8, one trailing newline (the same policy, the same bytes)."""
    return json.dumps(policy, indent=2, ensure_ascii=False) + "\n"


def _fail(where: str, path: str, message: str) -> PolicyError:
    return PolicyError(f"{where}: {path}: {message}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate(data, where: str = "policy file") -> dict:
    """The policy in its normal form (every field present, in the documented order); every bad field or value
    is refused by name. Algorithm options and privacy models are checked by the engine's registries."""
    if not isinstance(data, dict):
        raise PolicyError(f"{where}: a policy is a JSON object, got {type(data).__name__}")
    nul = _nul_path(data)
    if nul is not None:  # text with NUL characters is no column name or label (and no database stores it)
        raise _fail(where, nul, "a NUL character in the text")
    if data.get("format") != FORMAT:
        raise _fail(where, "format", f"expected {FORMAT!r}, got {data.get('format')!r}")
    if data.get("version") != VERSION:
        raise _fail(where, "version", f"this version reads version {VERSION}, got {data.get('version')!r}")
    unknown = sorted(set(data) - TOP_FIELDS)
    if unknown:
        raise _fail(where, unknown[0], f"unknown field; the fields are: {', '.join(sorted(TOP_FIELDS))}")
    if "columns" not in data:
        raise _fail(where, "columns", "missing")
    policy: dict = {"format": FORMAT, "version": VERSION}
    for name in ("name", "description"):
        value = data.get(name, "")
        if not isinstance(value, str):
            raise _fail(where, name, f"expected text, got {value!r}")
        policy[name] = value
    policy["columns"] = _columns(data["columns"], where)
    if "synthesis" in data and "algorithm" not in data and "k" not in data:  # a synthesis instead of a run
        given = [name for name in RUN_FIELDS if name in data]
        if given:
            raise _fail(where, given[0], "applies to an anonymization: a policy without algorithm and k holds a "
                                         "synthesis only")
        _synthesis(policy, data, where)
        return policy
    for name in ("algorithm", "k"):
        if name not in data:
            raise _fail(where, name, "missing (or give a synthesis step alone: synthesis)")
    names = [c["name"] for c in policy["columns"]]
    if not any(c["role"] == Role.QUASI_IDENTIFYING.value for c in policy["columns"]):
        raise _fail(where, "columns", "no column has the role 'quasi-identifying'")

    algorithm = data["algorithm"]
    if not isinstance(algorithm, str) or algorithm not in engine.ALGORITHMS:
        raise _fail(where, "algorithm", f"unknown algorithm {algorithm!r}; available: {', '.join(sorted(engine.ALGORITHMS))}")
    policy["algorithm"] = algorithm
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise _fail(where, "options", f"expected an object, got {options!r}")
    info = engine.get_algorithm(algorithm)
    known = {p.name: p for p in info.options}
    for name, value in options.items():
        if name not in known:
            raise _fail(where, f"options.{name}", f"{info.label} has no such option; its options: "
                        f"{', '.join(known) or 'none'}")
        try:
            known[name].validate(value)
        except (InputError, ValueError, TypeError) as exc:
            raise _fail(where, f"options.{name}", f"{value!r}: {exc}") from None
    policy["options"] = {name: known[name].validate(value) for name, value in options.items()}

    k = data["k"]
    if not _is_int(k) or k < 1:
        raise _fail(where, "k", f"expected a whole number of at least 1, got {k!r}")
    policy["k"] = k
    limit = data.get("suppression_limit", 0.0)
    if not isinstance(limit, (int, float)) or isinstance(limit, bool) or not 0 <= limit <= 1:
        raise _fail(where, "suppression_limit", f"expected a share between 0 and 1, got {limit!r}")
    policy["suppression_limit"] = float(limit)
    sensitive = data.get("sensitive")
    if sensitive is not None and (not isinstance(sensitive, str) or sensitive not in names):
        raise _fail(where, "sensitive", f"{sensitive!r} is not one of the policy's columns")
    policy["sensitive"] = sensitive or None
    _persons(policy, data, where)

    models = data.get("models", [])
    if not isinstance(models, list):
        raise _fail(where, "models", f"expected a list, got {models!r}")
    for i, spec in enumerate(models):
        if not isinstance(spec, dict) or not isinstance(spec.get("model"), str):
            raise _fail(where, f"models[{i}]", f"expected an object with a 'model' name, got {spec!r}")
        if spec.get("column") is not None and spec["column"] not in names:
            raise _fail(where, f"models[{i}].column", f"{spec['column']!r} is not one of the policy's columns")
        try:
            built = engine.privacy.make_model(spec["model"], **{k: v for k, v in spec.items() if k != "model"})
        except (InputError, TypeError, ValueError, AttributeError, KeyError, OverflowError) as exc:
            raise _fail(where, f"models[{i}]", str(exc)) from None
        if getattr(built, "column_source", None) == "research":
            raise _fail(where, f"models[{i}]", f"{built.describe()} needs a population dataset; a policy holds "
                                               f"runs on one table")
    policy["models"] = [dict(m) for m in models]

    publishing = data.get("publishing", {})
    if not isinstance(publishing, dict):
        raise _fail(where, "publishing", f"expected an object, got {publishing!r}")
    extra = sorted(set(publishing) - {"suppressed_rows"})
    if extra:
        raise _fail(where, f"publishing.{extra[0]}", "unknown field; the fields are: suppressed_rows")
    rows = publishing.get("suppressed_rows", "remove")
    if rows not in SUPPRESSED_ROWS:
        raise _fail(where, "publishing.suppressed_rows", f"expected one of {', '.join(SUPPRESSED_ROWS)}, got {rows!r}")
    policy["publishing"] = {"suppressed_rows": rows}
    policy["identifiers"] = _identifiers(data.get("identifiers", []), policy["columns"], where)
    _sdc(policy, data, where)
    if "synthesis" in data:  # a synthesis beside the anonymization
        _synthesis(policy, data, where)
    return policy


def _synthesis(policy: dict, data: dict, where: str) -> None:
    """The policy's synthesis step (policies/synthesis_step.py), written only when the policy has one."""
    # imported here: it reads the synthesizers' registry (their modules), which a policy without a step never needs
    from . import synthesis_step

    try:
        policy["synthesis"] = synthesis_step.validate(data["synthesis"], policy["columns"])
    except synthesis_step.StepError as exc:
        raise _fail(where, exc.path, exc.message) from None


def anonymizes(policy: dict) -> bool:
    """Whether the policy holds an anonymization (a run); without one it holds a synthesis only."""
    return "algorithm" in policy


def synthesizes(policy: dict) -> bool:
    return "synthesis" in policy


def _sdc(policy: dict, data: dict, where: str) -> None:
    """SDC steps after the recoding (engine/sdc/steps.py): ``sdc`` a list of {"method", "parameters"} and ``sdc_seed``
    the seed of the random ones; written only when the policy has steps, so other policies read and write as before."""
    if not data.get("sdc"):
        if data.get("sdc_seed") not in (None, 0):
            raise _fail(where, "sdc_seed", "a seed without SDC steps (sdc)")
        return
    try:
        steps = steps_from_json(data["sdc"])
    except InputError as exc:
        raise _fail(where, "sdc", str(exc)) from None
    names = [c["name"] for c in policy["columns"]]
    keys = [c["name"] for c in policy["columns"] if c["role"] == Role.QUASI_IDENTIFYING.value]
    if any(c["role"] == Role.PERSON.value for c in policy["columns"]):
        raise _fail(where, "sdc", "SDC methods count records, not persons: a policy with a person id cannot hold them")
    for i, step in enumerate(steps):
        for name in ("variables", "strata", "importance"):
            allowed = keys if name == "importance" else names
            for item in (v.strip() for v in str(step.parameters.get(name) or "").split(",")):
                if item and item not in allowed:
                    raise _fail(where, f"sdc[{i}].parameters.{name}", f"{item!r} is not one of the policy's "
                                f"{'quasi-identifiers' if name == 'importance' else 'columns'}")
    seed = data.get("sdc_seed", 0)
    if not _is_int(seed) or not 0 <= seed < 2**32:
        raise _fail(where, "sdc_seed", f"expected a whole number from 0 to {2**32 - 1}, got {seed!r}")
    policy["sdc"] = [s.to_json() for s in steps]
    policy["sdc_seed"] = int(seed)


def sdc_steps(policy: dict) -> tuple[SdcStep, ...]:
    """The policy's SDC steps for its RunSpec (none for a policy without them)."""
    return steps_from_json(policy.get("sdc"))


def _persons(policy: dict, data: dict, where: str) -> None:
    """A policy with a column of role "person id" (at most one) counts persons in every run: it remembers what the
    adversary knows of a person (``person_adversary``, engine/model/persons.ADVERSARIES; "class" when not given).
    The field is written only for such a policy, so a policy without persons reads and writes as before."""
    persons = [c["name"] for c in policy["columns"] if c["role"] == Role.PERSON.value]
    if len(persons) > 1:
        raise _fail(where, "columns", f"only one column can be the person id; {', '.join(map(repr, persons))} are")
    adversary = data.get("person_adversary")
    if adversary is None and not persons:
        return
    if not persons:
        raise _fail(where, "person_adversary", "applies to a policy with a column of role 'person id'")
    adversary = DEFAULT_ADVERSARY if adversary is None else adversary
    if adversary not in ADVERSARIES:
        raise _fail(where, "person_adversary", f"expected one of {', '.join(ADVERSARIES)}, got {adversary!r}")
    policy["person_adversary"] = adversary


def person_adversary(policy: dict) -> str:
    """What the adversary knows of a person in the policy's runs (the default when it has no person id)."""
    return policy.get("person_adversary", DEFAULT_ADVERSARY)


def _columns(columns, where: str) -> list[dict]:
    if not isinstance(columns, list) or not columns:
        raise _fail(where, "columns", f"expected a non-empty list, got {columns!r}")
    out, seen = [], set()
    for i, col in enumerate(columns):
        path = f"columns[{i}]"
        if not isinstance(col, dict):
            raise _fail(where, path, f"expected an object, got {col!r}")
        unknown = sorted(set(col) - COLUMN_FIELDS)
        if unknown:
            raise _fail(where, f"{path}.{unknown[0]}", f"unknown field; the fields are: {', '.join(sorted(COLUMN_FIELDS))}")
        name = col.get("name")
        if not isinstance(name, str) or not name:
            raise _fail(where, f"{path}.name", f"expected a column name, got {name!r}")
        if name in seen:
            raise _fail(where, f"{path}.name", f"column {name!r} is given twice")
        seen.add(name)
        path = f"columns[{i}] ({name})"
        role = col.get("role")
        if role not in ROLES:
            raise _fail(where, f"{path}.role", f"expected one of {', '.join(ROLES)}, got {role!r}")
        ctype = col.get("type", "string")
        if ctype not in COLUMN_TYPES:
            raise _fail(where, f"{path}.type", f"expected one of {', '.join(COLUMN_TYPES)}, got {ctype!r}")
        hierarchy = col.get("hierarchy")
        if hierarchy is not None:
            hierarchy = _hierarchy(hierarchy, name, f"{path}.hierarchy", where)
        out.append({"name": name, "role": role, "type": ctype, "hierarchy": hierarchy})
    return out


def _hierarchy(h, column: str, path: str, where: str) -> dict:
    if not isinstance(h, dict):
        raise _fail(where, path, f"expected an object with rows, got {h!r}")
    unknown = sorted(set(h) - HIERARCHY_FIELDS)
    if unknown:
        raise _fail(where, f"{path}.{unknown[0]}", f"unknown field; the fields are: {', '.join(sorted(HIERARCHY_FIELDS))}")
    name = h.get("name", column)
    if not isinstance(name, str) or not name:
        raise _fail(where, f"{path}.name", f"expected text, got {name!r}")
    on_conflict = h.get("on_conflict", "error")
    if on_conflict not in CONFLICT_POLICIES:
        raise _fail(where, f"{path}.on_conflict", f"expected one of {', '.join(CONFLICT_POLICIES)}, got {on_conflict!r}")
    rows = h.get("rows")
    if not isinstance(rows, list) or not rows:
        raise _fail(where, f"{path}.rows", "expected a non-empty list of rows (a leaf, then its generalizations)")
    for r, row in enumerate(rows):
        if not isinstance(row, list) or len(row) < 2 or not all(isinstance(v, str) and v for v in row):
            raise _fail(where, f"{path}.rows[{r}]", f"expected a leaf and at least one generalization, all "
                                                   f"non-empty text, got {row!r}")
    out = {"name": name, "on_conflict": on_conflict, "rows": [list(r) for r in rows]}
    try:
        engine_hierarchy(out, column)
    except engine.HierarchyError as exc:
        raise _fail(where, path, str(exc)) from None
    return out


def _identifiers(rules, columns: list[dict], where: str) -> list[dict]:
    """Treatments of identifying columns (pseudonymization rules): each names its column, which the policy
    marks identifying or person id (engine Table.identifying), and never carries a secret (a keyed rule names
    its key)."""
    if not isinstance(rules, list):
        raise _fail(where, "identifiers", f"expected a list, got {rules!r}")
    identifying = {c["name"] for c in columns if c["role"] in (Role.IDENTIFYING.value, Role.PERSON.value)}
    out: list[dict] = []
    seen: set[str] = set()
    for i, rule in enumerate(rules):
        path = f"identifiers[{i}]"
        if not isinstance(rule, dict):
            raise _fail(where, path, f"expected an object, got {rule!r}")
        if rule.get("column") not in identifying:
            raise _fail(where, f"{path}.column", f"{rule.get('column')!r} is not an identifying column of the policy")
        for key in _keys(rule):
            if any(word in key.lower() for word in SECRET_WORDS):
                raise _fail(where, f"{path}.{key}", "a policy never holds a secret: name the key instead")
        if rule["column"] in seen:
            raise _fail(where, f"{path}.column", f"{rule['column']!r} has another rule before")
        seen.add(rule["column"])
        try:  # the engine's own rule (engine/run/identifiers.py): its messages on bad fields and values
            out.append(IdentifierRule.from_dict(rule).to_dict())
        except InputError as exc:
            raise _fail(where, path, str(exc)) from None
    return out


def _nul_path(value, path: str = "") -> str | None:
    """The path of the first text (or key) holding a NUL character, None when there is none."""
    if isinstance(value, str):
        return (path or "(text)") if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return here
            found = _nul_path(item, here)
            if found is not None:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _nul_path(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def _keys(value) -> list[str]:
    if isinstance(value, dict):
        return [str(k) for k in value] + [k for v in value.values() for k in _keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    return []


# ---- hierarchies ---------------------------------------------------------------------------------
def engine_hierarchy(h: dict, column: str) -> Hierarchy:
    """The engine's hierarchy of an embedded one (its rows as a hierarchy file's lines)."""
    return Hierarchy.from_rows(h["rows"], column, f"hierarchy {h.get('name', column)!r} of the policy",
                               h.get("on_conflict", "error"))


def rows_of_text(content: str, delimiter: str) -> list[list[str]]:
    """A stored hierarchy's text as rows, exactly the lines its parser keeps (engine.model.hierarchy.parse_hierarchy)."""
    import csv
    import io

    text = content.lstrip("\ufeff")
    if "\r" in text and "\n" not in text:
        text = text.replace("\r", "\n")
    return [r for r in csv.reader(io.StringIO(text), delimiter=delimiter, strict=True) if r and any(c.strip() for c in r)]


def extend_rows(rows: list[list[str]], new_values: list[str]) -> list[list[str]]:
    """Each new value added as a leaf under an "(other)" node on every level between it and the root (the
    tree's depth kept: [value, "(other)", ..., root]); a one-level hierarchy puts it under the root. The root is
    the single label of the top level (with several, "(other)" stands on the top level too)."""
    width = len(rows[0])
    tops = {r[-1] for r in rows}
    root = next(iter(tops)) if len(tops) == 1 else OTHER
    return [list(r) for r in rows] + [[v] + [OTHER] * (width - 2) + [root] for v in new_values]


# ---- schema differences --------------------------------------------------------------------------
@dataclass
class SchemaReport:
    """What a table has that the policy does not expect, found before any run."""

    missing: list[str] = field(default_factory=list)  # policy columns the table lacks
    extra: list[str] = field(default_factory=list)  # table columns the policy does not name
    types: list[dict] = field(default_factory=list)  # {"column", "policy", "found"}
    new_values: list[dict] = field(default_factory=list)  # {"column", "values": [(value, count)], "total"}

    @property
    def blocking(self) -> list[str]:
        """Differences no choice resolves (the run stops)."""
        out = [f"column {c!r} is missing" for c in self.missing]
        out += [f"column {c!r} is not in the policy (its role is unknown)" for c in self.extra]
        out += [f"column {t['column']!r} is {t['found']}, the policy has {t['policy']}" for t in self.types]
        return out

    @property
    def clean(self) -> bool:
        return not (self.blocking or self.new_values)

    def lines(self) -> list[str]:
        """Every difference, one line each (CLI and API)."""
        out = list(self.blocking)
        for nv in self.new_values:
            shown = ", ".join(f"{v!r} ({n})" for v, n in nv["values"][:MAX_LISTED])
            more = f" and {len(nv['values']) - MAX_LISTED} more" if len(nv["values"]) > MAX_LISTED else ""
            out.append(f"column {nv['column']!r}: {len(nv['values'])} value(s) in {nv['total']} record(s) not covered "
                       f"by its hierarchy: {shown}{more}")
        return out

    def as_dict(self) -> dict:
        return {"missing": self.missing, "extra": self.extra, "types": self.types,
                "new_values": [{"column": nv["column"], "total": nv["total"],
                                "values": [{"value": v, "count": n} for v, n in nv["values"]]}
                               for nv in self.new_values],
                "blocking": self.blocking, "clean": self.clean}


def _type_agrees(policy_type: str, found: str) -> bool:
    # an integer column read where the policy has decimals is still a decimal column
    return policy_type == found or (policy_type == "decimal" and found == "integer") or policy_type == "string"


def schema_report(policy: dict, columns: list[str], types: dict[str, str], values) -> SchemaReport:
    """``columns``: the table's column names; ``types``: its inferred type per column; ``values(column)``:
    the column's cells (a Series). New values are counted only in the columns with an embedded hierarchy;
    missing cells (blank, NA markers) are never new: a run gives them their own leaf."""
    report = SchemaReport()
    names = [c["name"] for c in policy["columns"]]
    report.missing = [c for c in names if c not in columns]
    report.extra = [c for c in columns if c not in names]
    for col in policy["columns"]:
        name = col["name"]
        if name not in columns:
            continue
        found = types.get(name)
        if col["role"] in (Role.QUASI_IDENTIFYING.value, Role.SENSITIVE.value) and found is not None \
                and not _type_agrees(col["type"], found):
            report.types.append({"column": name, "policy": col["type"], "found": found})
        if col["hierarchy"] is None:
            continue
        leaves = set(engine_hierarchy(col["hierarchy"], name).leaf_index)
        counts = pd.Series(values(name), dtype=object).astype(str).value_counts(sort=False)
        new = [(str(v), int(n)) for v, n in counts.items() if str(v) not in leaves and not is_marker(str(v))]
        if new:
            new.sort(key=lambda p: (-p[1], p[0]))
            report.new_values.append({"column": name, "values": new, "total": sum(n for _, n in new)})
    return report


def extended(policy: dict, report: SchemaReport) -> dict:
    """The policy with each hierarchy extended by the new values the report found (extend_rows)."""
    out = json.loads(json.dumps(policy))
    by_column = {nv["column"]: [v for v, _ in nv["values"]] for nv in report.new_values}
    for col in out["columns"]:
        if col["name"] in by_column:
            col["hierarchy"]["rows"] = extend_rows(col["hierarchy"]["rows"], by_column[col["name"]])
    return out


def resolve(policy: dict, report: SchemaReport, on_new_values: str) -> dict:
    """The policy to run: PolicyError on a blocking difference, or on new values with ``stop``."""
    if on_new_values not in ON_NEW_VALUES:
        raise PolicyError(f"on_new_values: expected one of {', '.join(ON_NEW_VALUES)}, got {on_new_values!r}")
    if report.blocking:
        raise PolicyError("the table does not fit the policy: " + "; ".join(report.blocking))
    if report.new_values:
        if on_new_values == STOP:
            raise PolicyError("stopped: " + "; ".join(report.lines()) + " (extend the hierarchies to run)")
        return extended(policy, report)
    return policy


# ---- the run's parts -----------------------------------------------------------------------------
def roles(policy: dict) -> dict[str, Role]:
    return {c["name"]: Role(c["role"]) for c in policy["columns"]}


def column_types(policy: dict) -> dict[str, str]:
    return {c["name"]: c["type"] for c in policy["columns"]}


def hierarchies(policy: dict) -> dict[str, Hierarchy]:
    """The embedded hierarchies by column; QIs without one get the engine's default built from the data."""
    return {c["name"]: engine_hierarchy(c["hierarchy"], c["name"]) for c in policy["columns"] if c["hierarchy"]}


def run_arguments(policy: dict) -> dict:
    """RunSpec.build's keyword arguments (beside the table and hierarchies)."""
    return dict(algorithm=policy["algorithm"], k=policy["k"],
                models=[engine.privacy.make_model(m["model"], **{k: v for k, v in m.items() if k != "model"})
                        for m in policy["models"]],
                options=dict(policy["options"]), suppression_limit=policy["suppression_limit"],
                sensitive=policy["sensitive"], suppressed_rows=policy["publishing"]["suppressed_rows"])


# ---- Amnesia's anonymization rules ---------------------------------------------------------------
AMNESIA_HEADER = "Anonymization rules:"


def is_amnesia_rules(text: str) -> bool:
    return text.lstrip("\ufeff").split("\n", 1)[0].strip() == AMNESIA_HEADER


def from_amnesia_rules(text: str, k: int, suppression_limit: float = 0.0, other_columns: list[dict] | None = None,
                       name: str = "", where: str = "rules file") -> dict:
    """A policy from Amnesia's exported anonymization rules (docs/policies.md): each column of the file a
    quasi-identifier whose hierarchy is [original, anonymized, *], full-domain at level 1 on every one of them,
    so the mapping is re-applied exactly. ``other_columns``: the table's other columns (policy column objects);
    k and the suppression limit are not in the file."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or lines[0].strip() != AMNESIA_HEADER:
        raise PolicyError(f"{where}, line 1: expected {AMNESIA_HEADER!r} (Amnesia's anonymization rules), "
                          f"got {lines[0][:60]!r}" if lines else f"{where}: empty file")
    rules: dict[str, list[list[str]]] = {}
    column = None
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            column = None
            continue
        if column is None:
            column = line.strip()
            if column in rules:
                raise PolicyError(f"{where}, line {number}: column {column!r} is given twice")
            rules[column] = []
            continue
        original, sep, anonymized = line.partition("->")
        if not sep:
            raise PolicyError(f"{where}, line {number}: expected original->anonymized under column {column!r}, "
                              f"got {line[:60]!r}")
        if not original or is_marker(original):
            continue  # a missing value: a run gives missing cells their own leaf
        if not anonymized:
            raise PolicyError(f"{where}, line {number}: {original!r} of column {column!r} maps to an empty value")
        rules[column].append([original, anonymized, "*"])
    empty = [c for c, rows in rules.items() if not rows]
    if not rules or empty:
        raise PolicyError(f"{where}: column {empty[0]!r} has no rule" if empty else f"{where}: no column has rules")
    others = list(other_columns or [])
    clash = [c["name"] for c in others if c["name"] in rules]
    columns = [{"name": c, "role": Role.QUASI_IDENTIFYING.value, "type": "string",
                "hierarchy": {"name": f"{c} (Amnesia rules)", "on_conflict": "error", "rows": rows}}
               for c, rows in rules.items()]
    columns += [c for c in others if c["name"] not in clash]
    data = {"format": FORMAT, "version": VERSION, "name": name,
            "description": f"imported from Amnesia's anonymization rules ({where})", "columns": columns,
            "algorithm": "full-domain", "options": {"levels": ",".join("1" for _ in rules)}, "k": k,
            "suppression_limit": suppression_limit}
    return validate(data, where)
