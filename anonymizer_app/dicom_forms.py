"""The DICOM upload's form (a zip or a folder of DICOM files, the row level and the header attributes): the
web page's and the API's (views/dicom.py, api/dicom.py)."""

from __future__ import annotations

from django import forms

from .engine import dicom as dicom_engine


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def clean(self, data, initial=None):
        if isinstance(data, (list, tuple)):
            return [super(MultipleFileField, self).clean(d, initial) for d in data]
        return [super().clean(data, initial)] if data else []


def _attribute_choices() -> list[tuple[str, str]]:
    return [(a.keyword, f"{a.keyword} ({a.role.value}, {a.level} level)") for a in dicom_engine.DEFAULT_ATTRIBUTES]


class DicomUploadForm(forms.Form):
    archive = MultipleFileField(label="A zip of DICOM files", required=False,
                                widget=forms.ClearableFileInput(attrs={"accept": ".zip,application/zip"}))
    folder = MultipleFileField(label="…or a folder of DICOM files", required=False,
                               widget=MultipleFileInput(attrs={"webkitdirectory": True, "multiple": True}))
    name = forms.CharField(max_length=200, required=False, help_text="Optional; the file or folder name otherwise.")
    level = forms.ChoiceField(choices=[(k, f"{k}: {v}") for k, v in dicom_engine.LEVEL_LABELS.items()],
                              initial="file", widget=forms.RadioSelect, label="One table row per")
    attributes = forms.MultipleChoiceField(choices=_attribute_choices, widget=forms.CheckboxSelectMultiple,
                                           required=False, label="Header attributes")
    other = forms.CharField(required=False, label="Other attributes",
                            help_text="Keywords or tags, separated by commas (e.g. SeriesDate, 0010,1030 is "
                                      "ambiguous: write tags as 00101030).")

    def clean(self):
        data = super().clean()
        uploads = (data.get("archive") or []) + (data.get("folder") or [])
        if not uploads:
            raise forms.ValidationError("Choose a zip file or a folder of DICOM files.")
        if data.get("archive") and data.get("folder"):
            raise forms.ValidationError("Choose a zip file or a folder, not both.")
        names = list(data.get("attributes") or [])
        names += [t.strip() for t in (data.get("other") or "").split(",") if t.strip()]
        if not names:
            raise forms.ValidationError("Choose at least one header attribute.")
        data["uploads"], data["names"] = uploads, names
        return data
