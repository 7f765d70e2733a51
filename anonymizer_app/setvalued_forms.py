"""Forms of the set-valued pages: the upload (layout detected or chosen), the layout override of the
preview, the set-valued column of a table, and the k^m run. Algorithms come from the engine's registry
(engine.setvalued.SET_ALGORITHMS), hierarchies from the owner's library."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from django import forms
from django.conf import settings

from hierarchy_editor.models import Hierarchy

from .engine.setvalued import SET_ALGORITHMS
from .models import Dataset
from .services.setvalued import ITEM_DELIMITERS, covering_hierarchies

DELIMITER_BY_NAME = {name: d for d, name in ITEM_DELIMITERS.items()}
SHOWN = {"\t": "⇥", " ": "␣"}
ITEM_DELIMITER_CHOICES = [(name, f"{name}  ( {SHOWN.get(d, d)} )") for d, name in ITEM_DELIMITERS.items()]
LAYOUT_CHOICES = [(Dataset.TRANSACTIONS, "transactions: one record of items per line"),
                  (Dataset.TABLE, "table: a header row, one column may hold sets of items")]
# text and workbooks only: a Stata/SPSS/SAS file holds one value per cell, never a set of items
SET_EXTENSIONS = (".csv", ".tsv", ".txt", ".xlsx", ".dat")
M_HELP = "The adversary knows at most m items of a record; every set of at most m items must occur in k records."


class SetUploadForm(forms.Form):
    file = forms.FileField(label="Data file", allow_empty_file=True,
                           error_messages={"required": "Choose a file to upload."})
    name = forms.CharField(label="Name (optional)", required=False, max_length=200)
    layout = forms.ChoiceField(label="Layout", initial="auto",
                               choices=[("auto", "detect"), *LAYOUT_CHOICES])
    item_delimiter = forms.ChoiceField(label="Item delimiter", initial="auto",
                                       choices=[("auto", "detect"), *ITEM_DELIMITER_CHOICES])
    record_id = forms.ChoiceField(label="Record id first", initial="auto",
                                  choices=[("auto", "detect"), ("yes", "yes"), ("no", "no")])

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "items_%s")  # beside the table upload form on the datasets page
        super().__init__(*args, **kwargs)

    def clean_file(self):
        f = self.cleaned_data["file"]
        ext = Path(f.name).suffix.lower()
        if ext not in SET_EXTENSIONS:
            raise forms.ValidationError(f"{f.name}: unsupported file type {ext or '(no extension)'}; upload a "
                                        f"{', '.join(SET_EXTENSIONS)} file")
        limit_mb = settings.ANONYMIZER_MAX_UPLOAD_MB
        if f.size > limit_mb * 1024 * 1024:
            raise forms.ValidationError(f"{f.name}: {f.size / 1048576:.1f} MB, more than the limit of {limit_mb} MB")
        return f

    def delimiter(self) -> str:
        value = self.cleaned_data["item_delimiter"]
        return value if value == "auto" else DELIMITER_BY_NAME[value]


class LayoutForm(forms.Form):
    """The preview's override: read the original again as another layout."""

    layout = forms.ChoiceField(label="Layout", choices=LAYOUT_CHOICES)
    item_delimiter = forms.ChoiceField(label="Item delimiter", choices=ITEM_DELIMITER_CHOICES)
    record_id = forms.BooleanField(label="The first field of each line is the record's id", required=False)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "layout_%s")
        super().__init__(*args, **kwargs)

    def delimiter(self) -> str:
        return DELIMITER_BY_NAME[self.cleaned_data["item_delimiter"]]


class SetColumnForm(forms.Form):
    """Which column of a table holds sets of items (none: no set-valued column)."""

    column = forms.ChoiceField(label="Set-valued column", required=False)
    item_delimiter = forms.ChoiceField(label="Items inside a cell separated by", initial="pipe",
                                       choices=ITEM_DELIMITER_CHOICES)

    def __init__(self, *args, columns=(), **kwargs):
        kwargs.setdefault("auto_id", "column_%s")
        super().__init__(*args, **kwargs)
        self.fields["column"].choices = [("", "none"), *((c, c) for c in columns)]

    def delimiter(self) -> str:
        return DELIMITER_BY_NAME[self.cleaned_data["item_delimiter"]]


class SetRunForm(forms.Form):
    """k^m for a transaction dataset (with k), or the set-valued column of a table (prefix "set", the
    main run form's k)."""

    k = forms.IntegerField(label="k", initial=2, widget=forms.NumberInput(attrs={"min": 1, "step": 1}),
                           help_text="Every set of at most m items that occurs is held by at least k records.")
    m = forms.IntegerField(label="m", initial=2, widget=forms.NumberInput(attrs={"min": 1, "step": 1}),
                           help_text=M_HELP)
    set_algorithm = forms.ChoiceField(label="Set-valued algorithm",
                                      choices=[(name, a.summary) for name, a in SET_ALGORITHMS.items()])
    item_hierarchy = forms.TypedChoiceField(label="Item hierarchy", required=False, coerce=int, empty_value=None,
                                            help_text="From your hierarchy library (Apriori needs one).")
    item_suppression = forms.BooleanField(label="Suppress an item that reaches the hierarchy's root", required=False,
                                          initial=True)
    numeric_items = forms.BooleanField(
        label="Items are numbers with an order (dynamic hierarchies: ranges)", required=False, initial=False,
        help_text="Ticked, dynamic hierarchies merge neighbouring numbers into ranges such as [20000-30500]. "
                  "Leave it unticked for ids and names (movie ids, product codes): they are merged into sets "
                  "such as {1023, 1032}, since a range would claim an order they lack.")

    def __init__(self, *args, hierarchies=(), with_k: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.hierarchies = {h.pk: h for h in hierarchies}
        cast(forms.ChoiceField, self.fields["item_hierarchy"]).choices = [("", "none (dynamic hierarchies)"),
                                                 *((h.pk, h.name) for h in hierarchies)]
        if not with_k:
            del self.fields["k"]
            del self.fields["numeric_items"]  # a table's set-valued column: its items are grouped as sets

    def hierarchy(self):
        pk = self.cleaned_data.get("item_hierarchy")
        return self.hierarchies.get(pk) if pk is not None else None


def item_library(user, dataset=None) -> list:
    """The owner's hierarchies, offered as item hierarchies; for a ``dataset``, only those covering its items
    (services.setvalued.covering_hierarchies)."""
    library = list(Hierarchy.objects.filter(owner=user).order_by("name"))
    return library if dataset is None else covering_hierarchies(dataset, library)


class ItemBuildForm(forms.Form):
    """An item hierarchy from the data: the builders that apply to items, with their main options."""

    kind = forms.ChoiceField(label="Builder", choices=[
        ("grouping", "grouping (by frequency, alphabetical or numeric order, with a fanout)"),
        ("intervals", "intervals (numeric items)"), ("masking", "masking (codes: 6701* → 670**)"),
        ("data-driven", "data-driven (merge only the items rarer than k)")])
    order = forms.ChoiceField(label="Order (grouping, data-driven)", initial="frequency",
                              choices=[("frequency", "frequency"), ("alphabetical", "alphabetical"),
                                       ("numeric", "numeric")])
    fanout = forms.CharField(label="Fanout (grouping, intervals)", initial="2", max_length=40,
                             help_text="Items (or groups) merged per level, e.g. 2 or 2,5.")
    width = forms.FloatField(label="Interval width (intervals)", required=False, min_value=0)
    k = forms.IntegerField(label="k (data-driven)", required=False, min_value=1)
    name = forms.CharField(label="Name (optional)", required=False, max_length=100)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "build_%s")
        super().__init__(*args, **kwargs)

    def options(self) -> dict:
        d = self.cleaned_data
        kind = d["kind"]
        if kind == "grouping":
            return {"order": d["order"], "fanout": d["fanout"]}
        if kind == "intervals":
            return {"fanout": d["fanout"], **({"width": d["width"]} if d.get("width") else {})}
        if kind == "data-driven":
            return {"order": d["order"], **({"k": d["k"]} if d.get("k") else {})}
        return {}


class ItemHierarchyUploadForm(forms.Form):
    file = forms.FileField(label="Hierarchy file", allow_empty_file=True,
                           help_text="ARX (;), Datafly (,), Amnesia text or JSON: the format is detected.")

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("auto_id", "hierarchy_%s")
        super().__init__(*args, **kwargs)
