"""Forms of the anonymizer pages. Choices come from the engine (registry, roles, types, formats)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import pandas as pd
from django import forms
from django.conf import settings

from .engine import ALGORITHMS, COLUMN_TYPES, InputError, Role
from .engine.algorithms import supporting
from .engine.io.reader import DELIMITER_NAMES, DELIMITERS, ENCODINGS
from .engine.measure.risk.sdc_weights import weight_problem
from .engine.model.persons import ADVERSARIES
from .engine.privacy import model_groups as registry_groups
from .engine.run.spec import REMOVE, SUPPRESSED_ROWS
from .sdc_forms import SdcFields
from .services.comparison import parse_k_list
from .services.experiment import parse_size_list

UPLOAD_EXTENSIONS = (".csv", ".tsv", ".txt", ".xlsx", ".dta", ".sav", ".zsav", ".sas7bdat", ".zip")
UPLOAD_TYPES = ("a .csv, .tsv, .txt or .xlsx table, or a Stata .dta, SPSS .sav or SAS .sas7bdat file (or a .zip of a "
                ".sas7bdat and its .sas7bcat format catalog)")
CATALOG_EXTENSION = ".sas7bcat"
# Delimiters travel as names in forms and query strings (a literal tab is easy to lose on the way).
DELIMITER_BY_NAME = {DELIMITER_NAMES[d]: d for d in DELIMITERS}
DELIMITER_CHOICES = [(DELIMITER_NAMES[d], f"{DELIMITER_NAMES[d]}  ( {d if d != chr(9) else '⇥'} )") for d in DELIMITERS]
ENCODING_CHOICES = [(e, e) for e in dict.fromkeys([*ENCODINGS, "iso-8859-15", "mac-roman", "cp850"])]
HEADER_CHOICES = [("auto", "detect"), ("yes", "first line holds the column names"), ("no", "no header row")]

ROLE_HELP = {
    Role.IDENTIFYING.value: "identifies a person directly (name, e-mail, record id): removed from the output",
    Role.QUASI_IDENTIFYING.value: "identifies in combination with others (age, ZIP, sex): generalized or suppressed",
    Role.SENSITIVE.value: "what must not be linked to a person (diagnosis, salary): kept, used for the reports",
    Role.INSENSITIVE.value: "anything else: kept as is",
    Role.PERSON.value: "several records of one person (patient id, panel member): removed from the output; every "
                       "privacy model counts persons",
    Role.WEIGHT.value: "the survey's sampling weight (how many people each record stands for; numbers above 0): "
                       "kept as is; the risk page's sdcMicro figures estimate population frequencies from it",
    Role.HOUSEHOLD.value: "a household or cluster id: kept as is; the risk page's household risk combines its "
                          "members' risks",
}
ROLE_CHOICES = [(r.value, r.value) for r in Role]
TYPE_CHOICES = [(t, t) for t in COLUMN_TYPES]


def delimiter_name(delimiter: str) -> str:
    return DELIMITER_NAMES.get(delimiter, "comma")


def parse_delimiter(value: str | None, default: str) -> str | None:
    """A delimiter from a form or query string (its name or the character); None when unknown."""
    if not value:
        return default
    if value in DELIMITER_BY_NAME:
        return DELIMITER_BY_NAME[value]
    return value if value in DELIMITERS else None


# ---- upload ------------------------------------------------------------------------------------
class UploadForm(forms.Form):
    # Empty files get through to the engine, whose message names the file.
    file = forms.FileField(label="Data file", allow_empty_file=True,
                           error_messages={"required": "Choose a file to upload."})
    # SAS keeps value labels in a separate format catalog: without it a .sas7bdat shows its codes
    catalog = forms.FileField(label="SAS format catalog (optional)", required=False, allow_empty_file=True,
                              help_text="A .sas7bdat file's .sas7bcat: its value labels are shown instead of the codes.")
    name = forms.CharField(label="Name (optional)", required=False, max_length=200,
                           help_text="Defaults to the file name.")
    header = forms.ChoiceField(label="Header row", choices=HEADER_CHOICES, required=False, initial="auto",
                               help_text="Detected unless chosen; it can be changed on the preview.",
                               error_messages={"invalid_choice": "%(value)s is not a header choice; choose auto, "
                                                                 "yes or no"})

    def clean_file(self):
        f = self.cleaned_data["file"]
        ext = Path(f.name).suffix.lower()
        if ext not in UPLOAD_EXTENSIONS:
            raise forms.ValidationError(
                f"{f.name}: unsupported file type {ext or '(no extension)'}; "
                f"upload {UPLOAD_TYPES}")
        # Checked on the declared size before a single byte is read into memory.
        limit_mb = settings.ANONYMIZER_MAX_UPLOAD_MB
        if f.size > limit_mb * 1024 * 1024:
            raise forms.ValidationError(
                f"{f.name}: {f.size / 1048576:.1f} MB, more than the limit of {limit_mb} MB")
        return f

    def clean_catalog(self):
        f = self.cleaned_data.get("catalog")
        if not f:
            return None
        ext = Path(f.name).suffix.lower()
        if ext != CATALOG_EXTENSION:
            raise forms.ValidationError(f"{f.name}: a SAS format catalog is a {CATALOG_EXTENSION} file, not "
                                        f"{ext or '(no extension)'}")
        limit_mb = settings.ANONYMIZER_MAX_UPLOAD_MB
        if f.size > limit_mb * 1024 * 1024:
            raise forms.ValidationError(
                f"{f.name}: {f.size / 1048576:.1f} MB, more than the limit of {limit_mb} MB")
        return f

    def clean(self):
        data = super().clean()
        f, catalog = data.get("file"), data.get("catalog")
        if f and catalog and Path(f.name).suffix.lower() != ".sas7bdat":
            self.add_error("catalog", f"{catalog.name}: a SAS format catalog goes with a SAS .sas7bdat file, not "
                                      f"{f.name}" + (" (a .zip carries its catalog inside)"
                                                     if f.name.lower().endswith(".zip") else ""))
        return data

    def clean_header(self) -> bool | None:
        """True or False when chosen, None to detect it."""
        return {"yes": True, "no": False}.get(self.cleaned_data.get("header") or "auto")


# ---- read format -------------------------------------------------------------------------------
class FormatForm(forms.Form):
    delimiter = forms.ChoiceField(label="Delimiter", choices=DELIMITER_CHOICES, error_messages={
        "invalid_choice": "%(value)s is not a delimiter; choose " + ", ".join(DELIMITER_BY_NAME),
        "required": "Choose a delimiter."})
    encoding = forms.ChoiceField(label="Encoding", choices=ENCODING_CHOICES, error_messages={
        "invalid_choice": "%(value)s is not an encoding offered; choose one of the list",
        "required": "Choose an encoding."})
    header = forms.BooleanField(label="First row holds the column names", required=False)

    def __init__(self, *args, kind: str = "csv", **kwargs):
        super().__init__(*args, **kwargs)
        self.kind = kind
        if kind != "csv":  # a workbook or a Stata/SPSS/SAS file has no delimiter or text encoding
            del self.fields["delimiter"]
            del self.fields["encoding"]

    def clean_delimiter(self):
        return DELIMITER_BY_NAME[self.cleaned_data["delimiter"]]


# ---- columns -----------------------------------------------------------------------------------
TYPE_PATTERNS = {
    "integer": r"[-+]?\d+",
    # \d+(\.\d*)?, not \d+\.?\d*: two ways to split a run of digits backtrack quadratically (a
    # 32,767-digit cell ending in "x": 59 s); the same strings in linear time
    "decimal": r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?",
}


def type_mismatch(values: pd.Series, column_type: str) -> str | None:
    """The first non-empty value that is not of ``column_type``, or None when all fit."""
    if column_type == "string":
        return None
    s = values.astype(str).str.strip()
    s = s[s != ""]
    if column_type in TYPE_PATTERNS:
        bad = ~s.str.fullmatch(TYPE_PATTERNS[column_type])
    else:  # date
        bad = pd.to_datetime(s, errors="coerce", format="mixed").isna()
    return str(s[bad].iloc[0]) if bad.any() else None


class ColumnsForm(forms.Form):
    """One type and one role select per column, named ``type:<column>`` and ``role:<column>``."""

    def __init__(self, *args, columns, frame: pd.DataFrame | None = None, values=None, rows=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.columns = list(columns)
        # rows(name) -> the whole column, read only to name the row of a bad sampling weight
        self.rows = rows if rows is not None or frame is None else (
            lambda name: frame[name] if name in frame.columns else None)
        # values(name) -> the column's values (its distinct values in order of appearance are enough),
        # or None when the stored table has no such column; ``frame`` is the in-memory equivalent.
        if values is None and frame is not None:
            values = lambda name: frame[name] if name in frame.columns else None  # noqa: E731
        self.values = values
        for c in self.columns:
            # %% escapes a column name's own % signs from the %(value)s substitution
            name = repr(c.name).replace("%", "%%")
            self.fields[f"type:{c.name}"] = forms.ChoiceField(
                label=f"type of {c.name}", choices=TYPE_CHOICES, initial=c.type,
                widget=forms.Select(attrs={"id": f"col-{c.position}-type", "aria-label": f"type of {c.name}"}),
                error_messages={
                    "invalid_choice": f"column {name}: %(value)s is not a type; choose {', '.join(COLUMN_TYPES)}",
                    "required": f"column {name}: choose a type"})
            self.fields[f"role:{c.name}"] = forms.ChoiceField(
                label=f"role of {c.name}", choices=ROLE_CHOICES, initial=c.role,
                widget=forms.Select(attrs={"id": f"col-{c.position}-role", "class": "role-select",
                                           "aria-label": f"role of {c.name}"}), error_messages={
                    "invalid_choice": f"column {name}: %(value)s is not a role; choose "
                                      f"{', '.join(r.value for r in Role)}",
                    "required": f"column {name}: choose a role"})

    def clean(self):
        cleaned = super().clean()
        known = {c.name for c in self.columns}
        for key in self.data:
            for prefix in ("type:", "role:"):
                if key.startswith(prefix) and key[len(prefix):] not in known:
                    raise forms.ValidationError(f"unknown column {key[len(prefix):]!r}")
        if self.values is not None:
            for c in self.columns:
                chosen = cleaned.get(f"type:{c.name}")
                values = self.values(c.name) if chosen and chosen != c.type else None
                if values is not None:
                    bad = type_mismatch(values, chosen)
                    if bad is not None:
                        self.add_error(f"type:{c.name}", f"column {c.name!r}: {bad!r} is not a valid {chosen}")
                if cleaned.get(f"role:{c.name}") == Role.QUASI_IDENTIFYING.value and c.role != Role.QUASI_IDENTIFYING.value:
                    values = self.values(c.name)
                    if values is not None and not (values.astype(str).str.strip() != "").any():
                        self.add_error(f"role:{c.name}", f"column {c.name!r} has no values (every cell is empty): "
                                                         "it cannot be a quasi-identifier")
        roles = [cleaned.get(f"role:{c.name}") for c in self.columns]
        self._check_weight_household(roles)
        persons = [c.name for c, r in zip(self.columns, roles) if r == Role.PERSON.value]
        if len(persons) > 1:  # the engine counts persons by one column (Table.person)
            raise forms.ValidationError(
                f"only one column can be the person id; {', '.join(map(repr, persons))} are: give the others "
                f"the role identifying")
        # the person id leaves the output as an identifying column does
        if self.columns and all(r in (Role.IDENTIFYING.value, Role.PERSON.value) for r in roles):
            raise forms.ValidationError("every column is identifying: the output would have no column; mark at "
                                        "least one as quasi-identifying, sensitive or insensitive")
        return cleaned

    def _check_weight_household(self, roles: list) -> None:
        """One sampling-weight and one household column at most; a weight column holds numbers above 0."""
        for role in (Role.WEIGHT.value, Role.HOUSEHOLD.value):
            marked = [c.name for c, r in zip(self.columns, roles) if r == role]
            if len(marked) > 1:
                raise forms.ValidationError(f"only one column can be the {role}; {', '.join(map(repr, marked))} are")
        for c, r in zip(self.columns, roles):
            if r != Role.WEIGHT.value or self.values is None:
                continue
            values = self.values(c.name)
            if values is None:
                continue
            problem = weight_problem(values, c.name)
            if problem is not None:  # the whole column read only to name the row
                rows = self.rows(c.name) if self.rows else None
                self.add_error(f"role:{c.name}", weight_problem(values, c.name, rows) or problem)

    def changes(self) -> dict[str, tuple[str, str]]:
        """column name -> (type, role) as submitted."""
        return {c.name: (self.cleaned_data[f"type:{c.name}"], self.cleaned_data[f"role:{c.name}"])
                for c in self.columns}


# ---- run ---------------------------------------------------------------------------------------
def default_sensitive(columns) -> str:
    """The sensitive column a fresh run form starts on (the reports' column and every model's column): the one
    with the most distinct values; '' with none. An adversary who learns a value of the column with the most
    values learns the most (up to log2 of their number in bits), so its attribute-disclosure figures are the ones
    to read first. A tie is broken by tied_sensitive_choice. ``columns``: the dataset's Column rows.
    A submitted form with no column for the reports takes the one its models name (RunForm.clean);
    docs/definitions.md "Defaults of the run form"."""
    sensitive = [c for c in columns if c.role == Role.SENSITIVE.value]
    if not sensitive:
        return ""
    most = max(c.distinct_count or 0 for c in sensitive)
    return tied_sensitive_choice([c.name for c in sensitive if (c.distinct_count or 0) == most])


def tied_sensitive_choice(names: list[str]) -> str:
    """Of sensitive columns with equally many distinct values (in the dataset's order), the one on the original
    scale: a column whose name holds another tied column's name is taken as derived from it (logwage from wage,
    age_squared from age) and passed over; the first of those left. Equal counts disclose equally many bits, so
    the reports are best read on the values people know; derived columns are named after their source."""
    lowered = [n.lower() for n in names]
    original = [n for n, low in zip(names, lowered)
                if not any(other != low and other in low for other in lowered)]
    return (original or names)[0]


def _plain_default(value):
    """A float default with no fraction as a whole number: the number input then shows l as "2", not "2.0"."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def parameter_field(param, attrs: dict | None = None) -> forms.Field:
    """A form field from a Parameter (an algorithm's option, a source's parameter: label, help, default,
    choices); ``attrs`` for its widget.
    No min_value/max_value: the engine's own message ("l must be at least 1, got 0") is the one shown."""
    common = {"label": param.field_label, "help_text": param.help, "initial": _plain_default(param.default)}
    if param.choices is not None:
        return forms.ChoiceField(required=False, choices=[(c, c) for c in param.choices],
                                 widget=forms.Select(attrs=attrs), **common)
    if param.kind is bool:
        return forms.BooleanField(required=False, widget=forms.CheckboxInput(attrs=attrs), **common)
    if param.kind is int:
        return forms.IntegerField(required=False, widget=forms.NumberInput(attrs=attrs), **common)
    if param.kind is float:
        return forms.FloatField(required=False, widget=forms.NumberInput(attrs=attrs), **common)
    return forms.CharField(required=False, widget=forms.TextInput(attrs=attrs), **common)


def option_field_name(algorithm: str, param) -> str:
    return f"option:{algorithm}:{param.name}"


# Privacy models beside k: one group each on the run form (engine.privacy.model_groups: the models that
# declare the same ``group``); a group with several models (l-diversity) picks one by its variant. Every
# field comes from the model classes: their parameters (label, help, default, choices, bounds), their
# group label, the column they apply to (``column_source``, ``column_label``).
def model_field_name(group: str, name: str) -> str:
    return f"model:{group}:{name}"


def _model_field(group, param) -> forms.Field:
    """A model parameter's field; its bounds are the number input's min/max, and a parameter only some
    variants take says which in ``data-variants`` (the page shows it for those only)."""
    attrs = {k: v for k, v in (("min", param.minimum), ("max", param.maximum)) if v is not None}
    takers = group.takers(param.name)
    if group.has_variants and len(takers) < len(group.models):
        attrs["data-variants"] = " ".join(takers)
    field = parameter_field(param, attrs)
    # a parameter the variants read differently (l: distinct values, entropy ln l, recursive (c,l)): each
    # variant's own help, the page showing the chosen one's (static/js/run_help.js)
    helps = {v: p.help for v, m in group.variants.items() for p in m.parameters if p.name == param.name}
    if len(set(helps.values())) > 1:
        field.variant_help = helps  # type: ignore[attr-defined]  # our own attribute, read by _model_groups.html
        field.help_text = ""
    return field


class PrivacyModelFields:
    """The privacy models beside k as form fields, shared by the run form and the comparison form: one group
    per registry group, every field from the model classes (engine.privacy.model_groups)."""

    fields: dict
    cleaned_data: dict
    if TYPE_CHECKING:  # forms.Form's, which every form using these fields also derives from
        def __getitem__(self, name: str) -> forms.BoundField: ...

    def add_model_fields(self, sensitive_columns=(), subset_columns=(), populations=None,
                         exclude: tuple[str, ...] = (), sensitive_default: str = "") -> None:
        """``populations``: the owner's other datasets a research subset may be found in (δ-presence, k-map
        against a population); None offers only a 0/1 column of this dataset. ``exclude``: registry model names
        this form does not offer. ``sensitive_default``: the column the sensitive models start on (the
        reports' column), the first sensitive column without it."""
        self.model_group_list = [g for g in registry_groups() if not {m.name for m in g.models} & set(exclude)]
        for group in self.model_group_list:
            key = group.key
            self.fields[model_field_name(key, "enabled")] = forms.BooleanField(
                required=False, label=f"Apply {group.label}")
            if group.has_variants:
                self.fields[model_field_name(key, "variant")] = forms.ChoiceField(
                    required=False, label="Variant", choices=[(v, v) for v in group.variants],
                    initial=next(iter(group.variants)))
            for param in group.parameters:
                field = self.fields[model_field_name(key, param.name)] = _model_field(group, param)
                using = group.variants_using(param.name)
                if group.has_variants and len(using) < len(group.variants):
                    # shown only while one of these variants is chosen (static/js/run.js)
                    field.widget.attrs["data-variants"] = " ".join(using)
            if group.column_source == "research" and populations is not None:
                # the research subset: a 0/1 column of this dataset, or this dataset within another of the
                # owner's datasets (the population)
                self.fields[model_field_name(key, "population")] = forms.TypedChoiceField(
                    required=False, label="Research subset given by", coerce=int, empty_value=None,
                    choices=[("", "a 0/1 column of this dataset")]
                    + [(d.pk, f"this dataset within the population {d.name} ({d.n_rows:,} rows)")
                       for d in populations],
                    help_text="With a population dataset, this dataset's rows are found in it by their shared "
                              "columns, the population is anonymized and the result keeps this dataset's rows "
                              "only.")
            if group.column_source is not None:
                columns = subset_columns if group.column_source == "research" else sensitive_columns
                initial = columns[0] if columns else ""
                attrs = {}
                if group.column_source == "sensitive":
                    initial = sensitive_default if sensitive_default in columns else initial
                    # follows the reports' column until the user picks its own (static/js/run_sensitive.js)
                    attrs["data-sensitive-model"] = key
                self.fields[model_field_name(key, "column")] = forms.ChoiceField(
                    required=False, label=group.column_label, widget=forms.Select(attrs=attrs),
                    choices=[("", "(choose)")] + [(c, c) for c in columns], initial=initial)

    def sensitive_model_column(self, cleaned: dict) -> str:
        """The column the first ticked model on a sensitive column names ('' with none): the reports' column
        when the form gives none (docs/definitions.md "Defaults of the run form")."""
        for group in self.model_group_list:
            if group.column_source == "sensitive" and cleaned.get(model_field_name(group.key, "enabled")):
                column = cleaned.get(model_field_name(group.key, "column"))
                if column:
                    return str(column)
        return ""

    def privacy_models(self) -> list[dict]:
        """The models ticked, as {"model": registry name, parameter: value, ..., "column": column}; values are
        checked by the engine when the job is created (services.jobs.validate_models)."""
        out = []
        for group in self.model_group_list:
            key = group.key
            if not self.cleaned_data.get(model_field_name(key, "enabled")):
                continue
            cls = group.model_for(self.cleaned_data.get(model_field_name(key, "variant")))
            spec: dict[str, object] = {"model": cls.name}
            for param in cls.parameters:
                value = self.cleaned_data.get(model_field_name(key, param.name))
                spec[param.name] = param.default if value is None or value == "" else value
            if group.column_source is not None:
                spec["column"] = self.cleaned_data.get(model_field_name(key, "column")) or None
            out.append(spec)
        return out

    def population(self) -> int | None:
        """The id of the population dataset chosen for the models on the research subset (δ-presence, k-map
        against a population table), or None (a 0/1 column of this dataset)."""
        for group in self.model_group_list:
            if group.column_source == "research" and self.cleaned_data.get(model_field_name(group.key, "enabled")):
                return self.cleaned_data.get(model_field_name(group.key, "population"))
        return None

    def clean_research_subset(self, cleaned: dict) -> None:
        """The models on the research subset share one: the same population dataset, or the same 0/1 column."""
        chosen = {}
        for group in self.model_group_list:
            if group.column_source == "research" and cleaned.get(model_field_name(group.key, "enabled")):
                population = cleaned.get(model_field_name(group.key, "population"))
                chosen[group.label] = ("population", population) if population is not None else \
                    ("column", cleaned.get(model_field_name(group.key, "column")) or None)
        if len(set(chosen.values())) > 1:
            raise forms.ValidationError(f"{' and '.join(chosen)} apply to one research subset: choose the same "
                                        f"population dataset or the same 0/1 column for both")

    def model_groups(self) -> list[dict]:
        groups = []
        for group in self.model_group_list:
            key = group.key
            names = ["variant", *(p.name for p in group.parameters), "population", "column"]
            groups.append({"key": key, "label": group.label, "enabled": self[model_field_name(key, "enabled")],
                           "fields": [self[model_field_name(key, n)] for n in dict.fromkeys(names)
                                      if model_field_name(key, n) in self.fields]})
        return groups


class ColumnListField(forms.Field):
    """Column names: one box per column on a page (a value each), a list or a comma-separated text in the API."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> list[str]:
        if value is None or value == "":
            return []
        items = value if isinstance(value, (list, tuple)) else str(value).split(",")
        return [str(v).strip() for v in items if str(v).strip()]


class RunForm(SdcFields, PrivacyModelFields, forms.Form):
    algorithm = forms.ChoiceField(label="Algorithm")
    # No min_value here: the engine's own message ("k must be at least 1, got 0") is shown.
    k = forms.IntegerField(label="k", initial=2, widget=forms.NumberInput(attrs={"min": 1, "step": 1}),
                           help_text="Every combination of quasi-identifier values must be shared by at least "
                                     "k records.")
    # 5 %, not 0: with no suppression a few outlier records force whole QIs to '*' (first runs with the
    # defaults on Adult and two generated tables: 50-60 % of QI cells '*' at 0 %, 5-23 % at 5 %;
    # benchmarks/bench_first_run.py, docs/definitions.md "Defaults of the run form").
    suppression_percent = forms.FloatField(
        label="Suppression limit (%)", initial=5, min_value=0, max_value=100,
        widget=forms.NumberInput(attrs={"min": 0, "max": 100, "step": "any"}),
        help_text="Share of the records that may be suppressed (their quasi-identifiers become *).",
        error_messages={"min_value": "The suppression limit is a percentage between 0 and 100.",
                        "max_value": "The suppression limit is a percentage between 0 and 100."})
    suppressed_rows = forms.ChoiceField(
        label="Suppressed records", initial=REMOVE, required=False,
        choices=[(key, text[0].upper() + text[1:]) for key, text in SUPPRESSED_ROWS.items()],
        help_text="Published '*' rows would disclose the sensitive values of a small or uniform group, so they "
                  "are kept only when the suppressed records together satisfy every model of the run.")
    sensitive = forms.ChoiceField(label="Sensitive column for the reports", required=False,
                                  help_text="Homogeneous equivalence classes are counted on this column.")
    # services/pseudonyms.py: the value -> pseudonym/surrogate table, encrypted, downloadable by the owner only
    reidentification_table = forms.BooleanField(
        required=False, label="Keep a re-identification table",
        help_text="The original value behind each pseudonym or surrogate, stored encrypted with the result, never "
                  "in an export; you download it after re-entering your password.")
    # the columns that look like direct identifiers (services/identifier_suggestions.py) which the user confirms
    # to publish as they are: without it the pre-flight holds the run
    publish_as_is = ColumnListField(required=False, label="Publish as is",
                                    help_text="Columns that look identifying, confirmed to be published as they are.")
    # with a person-id column only (the page shows it then): what the adversary knows of one person
    person_adversary = forms.ChoiceField(
        label="The adversary knows", required=False, initial="class",
        choices=[(key, f"{key}: {text}") for key, text in ADVERSARIES.items()],
        error_messages={"invalid_choice": "%(value)s is not an adversary; choose " + " or ".join(ADVERSARIES)})

    def __init__(self, *args, sensitive_columns=(), subset_columns=(), populations=(),
                 person_column: str | None = None, sensitive_default: str = "", **kwargs):
        """``sensitive_default``: the column a fresh form starts on (default_sensitive), else the first."""
        super().__init__(*args, **kwargs)
        # the dataset's person-id column (None: every record is its own person)
        self.person_column = person_column
        if person_column is not None:
            self.fields["person_adversary"].help_text = person_help(person_column)
            self.fields["k"].help_text = ("Every combination of quasi-identifier values must be shared by at least "
                                          "k persons (the person id counts them, not records).")
            self.fields["suppression_percent"].help_text = ("Share of the persons that may be suppressed (with all "
                                                            "their records).")
        self.fields["algorithm"].choices = [(a.name, a.label) for a in ALGORITHMS.values() if not a.republishes]
        # Flash is the default: the optimum of the default metric (NCP) over the full-domain lattice, and on
        # Adult and the tables of benchmarks/bench_quality.py a lower NCP than Datafly's at every suppression
        # limit measured, in under a second; registry order decides when it is missing
        self.fields["algorithm"].initial = "flash" if "flash" in ALGORITHMS else next(iter(ALGORITHMS), None)
        self.fields["sensitive"].choices = [("", "(none)")] + [(c, c) for c in sensitive_columns]
        if sensitive_columns:
            if sensitive_default not in sensitive_columns:
                sensitive_default = sensitive_columns[0]
            self.fields["sensitive"].initial = sensitive_default
        # Each algorithm's own options, from the registry; the page shows those of the selected one.
        for info in ALGORITHMS.values():
            for param in () if info.republishes else info.options:  # m-invariance runs from policies and the CLI
                self.fields[option_field_name(info.name, param)] = parameter_field(param)
        # Privacy models beside k, each on its own column, from the registry.
        self.add_model_fields(sensitive_columns, subset_columns, populations, sensitive_default=sensitive_default)
        self.add_sdc_fields()  # SDC methods after the recoding, from engine.sdc.METHODS (sdc_forms.py)

    def algorithm_options(self) -> dict:
        info = ALGORITHMS[self.cleaned_data["algorithm"]]
        out = {}
        for param in info.options:
            value = self.cleaned_data.get(option_field_name(info.name, param))
            if value is not None and value != "":
                out[param.name] = param.validate(value)  # InputError names the option
        out.update(self.sdc_options())  # the SDC steps travel with the job's options (services/sdc_runs.py)
        return out

    def clean(self):
        cleaned = super().clean()
        self.clean_research_subset(cleaned)
        cleaned["person_adversary"] = cleaned.get("person_adversary") or "class"
        if not cleaned.get("sensitive"):  # the reports read the column the run's models protect
            cleaned["sensitive"] = self.sensitive_model_column(cleaned)
        return cleaned

    def option_groups(self) -> list[dict]:
        return [{"algorithm": info.name, "label": info.label,
                 "fields": [self[option_field_name(info.name, p)] for p in info.options]}
                for info in ALGORITHMS.values() if info.options and not info.republishes]


def person_help(column: str) -> str:
    """The run form's words for a dataset with a person id: who counts persons, and what the choice means."""
    able = ", ".join(ALGORITHMS[name].label for name in supporting("person_level")) or "none"
    return (f"{column!r} is the person id: every privacy model counts persons, not records, and a person's "
            f"records are suppressed together. Algorithms that count persons: {able}; the others refuse the run.")


# ---- comparison --------------------------------------------------------------------------------
DEFAULT_COMPARE = ("datafly", "flash", "mondrian", "kmember", "oka", "disk-clustering")
COMPARISON_EXCLUDED_MODELS = ("differential-privacy",)


class CompareForm(PrivacyModelFields, forms.Form):
    algorithms = forms.MultipleChoiceField(
        label="Algorithms", widget=forms.CheckboxSelectMultiple,
        help_text="Each runs once per k with its default options; every result is verified.")
    k_values = forms.CharField(label="Values of k", initial="2, 5, 10, 50, 100", max_length=200,
                               help_text="Whole numbers separated by commas.")
    # the run form's own field (its default, bounds and messages): a comparison that starts from other
    # defaults than a run compares other runs than the user would make (issue 29: 0 % here, 5 % there)
    suppression_percent = RunForm.base_fields["suppression_percent"]
    sensitive = forms.ChoiceField(label="Sensitive column for the reports", required=False)
    # the run form's field: with a person id every run of the comparison counts persons against this adversary
    person_adversary = RunForm.base_fields["person_adversary"]
    weights = forms.CharField(label="Attribute weights", required=False, max_length=2000,
                              help_text="Optional: qi=w, qi=w with w from 0 to 1 (others 0.5), for every algorithm "
                                        "that takes them (the lattice searches, Mondrian, k-member, OKA); the "
                                        "others run unweighted.")

    def __init__(self, *args, sensitive_columns=(), subset_columns=(), person_column: str | None = None,
                 sensitive_default: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.person_column = person_column
        if person_column is not None:
            self.fields["person_adversary"].help_text = person_help(person_column)
        self.fields["algorithms"].choices = [(a.name, a.label) for a in ALGORITHMS.values() if not a.republishes]
        self.fields["algorithms"].initial = [a for a in DEFAULT_COMPARE if a in ALGORITHMS]
        self.fields["sensitive"].choices = [("", "(none)")] + [(c, c) for c in sensitive_columns]
        if sensitive_columns:  # the run form's default (default_sensitive)
            if sensitive_default not in sensitive_columns:
                sensitive_default = sensitive_columns[0]
            self.fields["sensitive"].initial = sensitive_default
        # the run form's models beside k, on a column of this dataset (no population dataset: each run of the
        # comparison anonymizes this table); not differential privacy: every SafePub run would spend ε of the
        # dataset's budget outside its ledger (services/privacy_ledger.py charges runs made from the run form)
        self.add_model_fields(sensitive_columns, subset_columns, populations=None,
                              exclude=COMPARISON_EXCLUDED_MODELS, sensitive_default=sensitive_default)

    def clean(self):
        cleaned = super().clean()
        self.clean_research_subset(cleaned)
        cleaned["person_adversary"] = cleaned.get("person_adversary") or "class"
        return cleaned

    def clean_k_values(self):
        try:
            return parse_k_list(self.cleaned_data["k_values"])
        except InputError as exc:
            raise forms.ValidationError(str(exc)) from None


# ---- the seed-001 experiment -------------------------------------------------------------------
class ExperimentForm(forms.Form):
    sizes = forms.CharField(label="Generated people tables (rows)", initial="10000, 50000, 100000", max_length=200,
                            required=False,
                            help_text="Sizes separated by commas; each table is drawn from the demo's hierarchy "
                                      "files (QI values uniform among the leaves, disease as in db_100.csv). "
                                      "Leave empty to run on this dataset only.")
    seed = forms.IntegerField(label="Seed", initial=0, widget=forms.NumberInput(attrs={"min": 0, "step": 1}),
                              help_text="The same seed draws the same tables.")
    include_dataset = forms.BooleanField(label="Also this dataset (its roles and hierarchies)", required=False)
    sensitive = forms.ChoiceField(label="Sensitive column of this dataset", required=False)
    k_values = forms.CharField(label="Values of k", initial="2, 3, 5, 10, 20, 50", max_length=200,
                               help_text="Whole numbers separated by commas.")
    algorithm = forms.ChoiceField(label="Algorithm")
    suppression_percent = forms.FloatField(
        label="Suppression limit (%)", initial=0, min_value=0, max_value=100,
        widget=forms.NumberInput(attrs={"min": 0, "max": 100, "step": "any"}),
        error_messages={"min_value": "The suppression limit is a percentage between 0 and 100.",
                        "max_value": "The suppression limit is a percentage between 0 and 100."})

    def __init__(self, *args, sensitive_columns=(), dataset_ready: bool = False, **kwargs):
        """``dataset_ready``: the dataset the page was opened from has a quasi-identifier and a sensitive column,
        so the experiment starts on it (the generated tables are an addition to ask for, not the default)."""
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["algorithm"]).choices = [
            (a.name, a.label) for a in ALGORITHMS.values() if not a.republishes]
        self.fields["algorithm"].initial = "datafly" if "datafly" in ALGORITHMS else next(iter(ALGORITHMS), None)
        cast(forms.ChoiceField, self.fields["sensitive"]).choices = [
            ("", "(first sensitive column)"), *[(c, c) for c in sensitive_columns]]
        if dataset_ready:
            self.fields["include_dataset"].initial = True
            self.fields["sizes"].initial = ""

    def clean_sizes(self):
        try:
            return parse_size_list(self.cleaned_data["sizes"])
        except InputError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_k_values(self):
        try:
            return parse_k_list(self.cleaned_data["k_values"])
        except InputError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self):
        cleaned = super().clean()
        if "sizes" in cleaned and not cleaned["sizes"] and not cleaned.get("include_dataset"):
            raise forms.ValidationError("Choose at least one table: a generated size or this dataset.")
        return cleaned
