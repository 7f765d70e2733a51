"""Forms of the hierarchy editor: upload a hierarchy file, resolve its conflicts, pick one from the library."""

from __future__ import annotations

import json
import re
import secrets
import time
from pathlib import Path

from django import forms
from django.conf import settings
from django.utils.html import format_html

from anonymizer_app.engine import HierarchyError
from anonymizer_app.engine.model.formats import detect_format, read_hierarchy_text
from anonymizer_app.engine.model.hierarchy import MAX_LABEL_CHARS, MAX_LEVELS, check_size, decode_hierarchy
from anonymizer_app.services import storage

from .models import NAME_MAX, Hierarchy, fit_name

# Hierarchy files are kept whole in the database, so they get a tighter limit than datasets.
DEFAULT_MAX_HIERARCHY_MB = 20
PENDING_DIR = storage.PENDING  # erasure finds a user's pending uploads by this folder and naming
PENDING_MAX_AGE = 24 * 3600  # seconds an upload waiting for a conflict resolution is kept
PENDING_PER_USER = 5  # and how many of them per user, the newest
TOKEN_RE = re.compile(r"^[0-9a-f]{32}$")

POLICY_CHOICES = [
    ("error", "Refuse the file and show the ambiguous values"),
    ("lift", "Lift: generalize each ambiguous value to the lowest level where all its paths agree"),
    ("first", "First: keep the first path given for each ambiguous value"),
]
RESOLUTION_CHOICES = POLICY_CHOICES[1:]
FORMAT_LABELS = {
    "arx": "ARX CSV (one row per leaf, ;)",
    "datafly": "Datafly CSV (one row per leaf, ,)",
    "amnesia-text": "Amnesia text",
    "amnesia-json": "Amnesia JSON",
}
FORMAT_CHOICES = [("auto", "Detect")] + list(FORMAT_LABELS.items())
CSV_DELIMITERS = {"arx": ";", "datafly": ","}


def max_hierarchy_bytes() -> int:
    return getattr(settings, "HIERARCHY_MAX_UPLOAD_MB", DEFAULT_MAX_HIERARCHY_MB) * 1024 * 1024


def decode_upload(raw: bytes, filename: str = "upload") -> str:
    """UTF-8 (with or without BOM), UTF-16, else Latin-1 (engine.model.hierarchy.decode_hierarchy); binary
    content raises HierarchyError naming the file."""
    return decode_hierarchy(raw, filename)


def size_limits() -> dict:
    """The size limits of a hierarchy (settings HIERARCHY_MAX_LABEL_CHARS, HIERARCHY_MAX_LEVELS)."""
    return {"max_label_chars": int(getattr(settings, "HIERARCHY_MAX_LABEL_CHARS", MAX_LABEL_CHARS)),
            "max_levels": int(getattr(settings, "HIERARCHY_MAX_LEVELS", MAX_LEVELS))}


# ---- uploads waiting for a conflict resolution --------------------------------------------------
# A file with contradictory rows is kept server-side under a random token, so the user can choose
# a resolution without uploading it again and without the page carrying ~18,000 leaves.
def _pending_path(user, token: str) -> Path:
    return Path(settings.MEDIA_ROOT) / PENDING_DIR / f"{user.pk}-{token}.json"


def save_pending(user, text: str, source_name: str, name: str) -> str:
    folder = Path(settings.MEDIA_ROOT) / PENDING_DIR
    folder.mkdir(parents=True, exist_ok=True)
    cutoff = time.time() - PENDING_MAX_AGE
    for old in folder.glob("*.json"):
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass
    # a user's older pending uploads make room (each may be HIERARCHY_MAX_UPLOAD_MB): the newest few are kept
    mine = sorted(folder.glob(f"{int(user.pk)}-*.json"), key=lambda p: (p.stat().st_mtime, p.name))
    for old in mine[: max(0, len(mine) - pending_per_user() + 1)]:
        old.unlink(missing_ok=True)
    token = secrets.token_hex(16)
    path = _pending_path(user, token)
    path.write_text(json.dumps({"text": text, "source_name": source_name, "name": name}), encoding="utf-8")
    return token


def pending_per_user() -> int:
    """Uploads waiting for a conflict resolution kept per user (setting HIERARCHY_PENDING_PER_USER)."""
    return max(1, int(getattr(settings, "HIERARCHY_PENDING_PER_USER", PENDING_PER_USER)))


def load_pending(user, token: str) -> dict | None:
    if not TOKEN_RE.match(token or ""):
        return None
    try:
        return json.loads(_pending_path(user, token).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def discard_pending(user, token: str) -> None:
    if TOKEN_RE.match(token or ""):
        _pending_path(user, token).unlink(missing_ok=True)


class HierarchyUploadForm(forms.Form):
    """A hierarchy file (one row per leaf, no header), or a pending upload plus a resolution."""

    file = forms.FileField(
        required=False,
        allow_empty_file=True,  # the parser says "<file>: the hierarchy is empty", naming the file
        label="Hierarchy file",
        help_text=format_html(
            "CSV, one row per original value: <code>{}</code> (ARX layout, <code>{}</code>) or <code>{}</code> "
            "(Datafly exercise, <code>{}</code>), no header, identical duplicate rows accepted; or an Amnesia "
            "hierarchy (text or JSON).", "value;level1;…;root", ";", "value,level1,…", ","),
    )
    name = forms.CharField(required=False, max_length=NAME_MAX, label="Name",
                           help_text="Optional; defaults to the file name.")
    format = forms.ChoiceField(choices=FORMAT_CHOICES, initial="auto", required=False, label="Format",
                               help_text="Detected from the file's name and content unless you choose.")
    on_conflict = forms.ChoiceField(
        choices=POLICY_CHOICES, initial="error", widget=forms.RadioSelect,
        label="Values with contradictory generalizations",
    )
    pending = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, user=None, default_name: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.default_name = default_name
        self.fields["file"].widget.attrs["accept"] = ".csv,.txt,.json,text/csv,text/plain,application/json"
        if default_name:
            self.fields["name"].help_text = f"Optional; defaults to “{default_name}”."

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("file")
        token = cleaned.get("pending") or ""
        if upload:
            if upload.size > max_hierarchy_bytes():
                raise forms.ValidationError(
                    f"{upload.name}: {upload.size / 1048576:.1f} MB, more than the limit of "
                    f"{max_hierarchy_bytes() // 1048576} MB for a hierarchy file")
            source_name = fit_name(Path(upload.name).name, 255)
            try:
                cleaned["text"] = decode_upload(upload.read(), source_name)
            except HierarchyError as exc:  # shown like the parser's errors, by build()
                cleaned["text"], cleaned["unreadable"] = "", str(exc)
            cleaned["source_name"] = source_name
            cleaned["pending"] = ""
        elif token:
            pending = load_pending(self.user, token)
            if pending is None:
                raise forms.ValidationError(
                    "The uploaded file is no longer available; please upload it again.")
            cleaned["text"] = pending["text"]
            cleaned["source_name"] = pending["source_name"]
            if not cleaned.get("name"):
                cleaned["name"] = pending["name"]
        else:
            raise forms.ValidationError("Choose a hierarchy file to upload.")
        if not cleaned.get("name"):
            cleaned["name"] = fit_name(self.default_name or Path(cleaned["source_name"]).stem or "hierarchy")
        return cleaned

    def build(self) -> Hierarchy:
        """Parse into an unsaved Hierarchy; raises HierarchyError (with ``.conflicts`` when ambiguous)."""
        data = self.cleaned_data
        if data.get("unreadable"):
            raise HierarchyError(data["unreadable"])
        fmt = data.get("format") or "auto"
        if fmt == "auto":
            fmt = detect_format(data["text"], data["source_name"])
        if fmt in CSV_DELIMITERS:
            # One row per leaf already: stored exactly as uploaded.
            h = Hierarchy.from_text(self.user, data["name"], data["text"], data["source_name"],
                                    on_conflict=data["on_conflict"],
                                    delimiter=None if data.get("format") in ("", "auto", None) else CSV_DELIMITERS[fmt])
        else:
            parsed = read_hierarchy_text(data["text"], data["name"], filename=data["source_name"], fmt=fmt,
                                         on_conflict=data["on_conflict"])
            h = Hierarchy(owner=self.user, name=data["name"], source_name=data["source_name"],
                          content=parsed.to_csv(";"), delimiter=";", on_conflict=data["on_conflict"],
                          leaves=len(parsed.leaves), height=parsed.height)
            h._parsed = parsed
        check_size(h.to_engine(), data["source_name"], **size_limits())
        h.source_format = fmt
        return h


class ResolutionForm(forms.Form):
    """Shown after a conflict error: the same upload (by token) with lift or first."""

    name = forms.CharField(required=False, max_length=NAME_MAX, widget=forms.HiddenInput)
    format = forms.CharField(required=False, widget=forms.HiddenInput)
    pending = forms.CharField(widget=forms.HiddenInput)
    on_conflict = forms.ChoiceField(choices=RESOLUTION_CHOICES, initial="lift", widget=forms.RadioSelect,
                                    label="Resolution")


class SelectHierarchyForm(forms.Form):
    """Bind a hierarchy of the user's own library to a column; it must cover the column's values."""

    hierarchy = forms.ModelChoiceField(queryset=Hierarchy.objects.none(), label="Hierarchy from your library",
                                       empty_label=None)

    def __init__(self, *args, user=None, values=None, column_name: str = "", parse=None, **kwargs):
        super().__init__(*args, **kwargs)
        # Only the user's own hierarchies are valid; another user's id is "not one of the choices".
        # (The view narrows the displayed choices to the ones covering the column.)
        field = self.fields["hierarchy"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = Hierarchy.objects.filter(owner=user).defer("content")
        self.values = values
        self.column_name = column_name
        self.parse = parse or (lambda h: h.to_engine(column_name))

    def clean_hierarchy(self):
        h = self.cleaned_data["hierarchy"]  # its deferred content loads on first use
        try:
            parsed = self.parse(h)
        except HierarchyError as exc:
            raise forms.ValidationError(str(exc)) from exc
        if self.values is not None:
            missing = parsed.missing_values(self.values)
            if missing:
                shown = ", ".join(repr(v) for v in missing[:8])
                more = f" and {len(missing) - 8} more" if len(missing) > 8 else ""
                raise forms.ValidationError(
                    f"{h.name!r} does not cover {len(missing)} value(s) of column "
                    f"{self.column_name!r}: {shown}{more}")
        return h


def label_of(h: Hierarchy) -> str:
    source = f" — {h.source_name}" if h.source_name and h.source_name != h.name else ""
    return f"{h.name}{source} ({h.leaves} leaves, height {h.height})"


# ---- builders ------------------------------------------------------------------------------------
def field_name(parameter) -> str:
    return parameter.name.replace(" ", "_").replace("-", "_")


class BuilderForm(forms.Form):
    """The options of one automatic builder, generated from its parameters (engine.privacy.Parameter).

    Each value is checked by ``Parameter.validate``, so the messages are the engine's; the initial
    values are the builder's data-derived ``defaults(values)`` over the parameters' own defaults."""

    def __init__(self, *args, builder=None, defaults: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.builder = builder
        defaults = defaults or {}
        for p in builder.parameters:
            initial = defaults.get(p.name, p.default)
            if isinstance(initial, float) and initial.is_integer():
                initial = int(initial)  # 10 rather than 10.0 in the form
            optional = p.default is None  # empty: derived from the data by the builder
            attrs = {"data-parameter": p.name}
            field: forms.Field
            if p.choices is not None:
                choices = [(c, c) for c in p.choices]
                if optional:
                    choices.insert(0, ("", "default"))
                field = forms.ChoiceField(choices=choices, required=not optional)
            elif p.kind is bool:
                field = forms.BooleanField(required=False)
            elif p.kind in (int, float):
                field = forms.CharField(max_length=40, required=not optional)  # negatives, decimals
                attrs["inputmode"] = "decimal" if p.kind is float else "numeric"
                if optional:
                    attrs["placeholder"] = "from the data"
            else:
                field = forms.CharField(max_length=100000, required=False, strip=False)
                if "order" in p.name:
                    field.widget = forms.Textarea(attrs={"rows": 3})
                if optional:
                    attrs["placeholder"] = "from the data"
            field.label = p.name.replace("_", " ").capitalize()
            field.help_text = p.help
            field.initial = "" if initial is None else initial
            field.widget.attrs.update(attrs)
            self.fields[field_name(p)] = field

    def clean(self):
        cleaned = super().clean()
        options = {}
        for p in self.builder.parameters:
            key = field_name(p)
            if key not in cleaned:
                continue  # the field's own error is already shown
            value = cleaned[key]
            if p.kind is bool:
                options[p.name] = bool(value)
            elif isinstance(value, str) and not value.strip():
                options[p.name] = None if p.default is None else p.default
            elif p.kind is str and p.choices is None:
                options[p.name] = value
            else:
                try:
                    options[p.name] = p.validate(value.strip() if isinstance(value, str) else value)
                except ValueError as exc:
                    self.add_error(key, str(exc))
        cleaned["options"] = options
        return cleaned
