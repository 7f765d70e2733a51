"""DICOM headers: upload a zip or a folder of DICOM files as a dataset (services/dicom.py), and download a
result as de-identified DICOM files (a zip built from the published rows)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from ..engine import InputError, VerificationError
from ..engine import dicom as dicom_engine
from ..models import Job
from ..services import dicom
from .common import job_result, owned_job


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


@login_required
@require_http_methods(["GET", "POST"])
def upload(request):
    initial_level = request.GET.get("level") if request.GET.get("level") in dicom_engine.LEVELS else "file"
    form = DicomUploadForm(request.POST or None, request.FILES or None, initial={
        "level": initial_level, "attributes": [a.keyword for a in dicom_engine.default_attributes(initial_level)]})
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            dataset = dicom.create_dicom_dataset(request.user, d["uploads"], d["level"], d["names"],
                                                 name=d["name"].strip() or None)
        except InputError as exc:
            form.add_error(None, str(exc))
        else:
            info = dicom.describe(dataset)
            messages.success(request, f"Read {info['files']:,} DICOM files into {dataset.n_rows:,} rows "
                                      f"({info['level_label']}). The roles the de-identification profile proposes "
                                      f"are set; check them, then run.")
            return redirect("anonymizer:columns", dataset_id=dataset.pk)
    level_attributes = {level: [a.keyword for a in dicom_engine.default_attributes(level)]
                        for level in dicom_engine.LEVELS}
    return render(request, "dicom/upload.html", {"form": form, "level_attributes": level_attributes},
                  status=400 if form.errors else 200)


@login_required
@require_GET
def download(request, job_id):
    job = owned_job(request, job_id)
    if job.kind != Job.RUN or not dicom.is_dicom(job.dataset):
        raise Http404("this job's dataset is not a set of DICOM files")
    job_result(job)
    try:
        path = dicom.result_archive(job)
    except (InputError, VerificationError) as exc:
        messages.error(request, f"The DICOM files could not be written: {exc}")
        return redirect("anonymizer:result", job_id=job.pk)
    handle = open(path, "rb")
    path.unlink()  # the open handle keeps the bytes until the response is sent
    return FileResponse(handle, as_attachment=True, filename=f"{job.dataset.name}-deidentified.zip",
                        content_type="application/zip")
