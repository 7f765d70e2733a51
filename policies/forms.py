"""Forms of the policy pages: save a result's configuration, import a file, apply a version to a dataset."""

from __future__ import annotations

from django import forms

from anonymizer_app.models import Dataset

from .models import Policy, PolicyVersion
from .policy_file import EXTEND, STOP

MAX_POLICY_BYTES = 20 * 1024 * 1024  # embedded hierarchies make policies large; beyond this, refuse


class SaveForm(forms.Form):
    name = forms.CharField(max_length=Policy._meta.get_field("name").max_length,
                           help_text="an existing name adds a new version of that policy")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    alongside = forms.BooleanField(required=False, label="Keep the policy's anonymization beside this synthesis",
                                   help_text="a synthetic set only: the new version holds the anonymization of the "
                                             "named policy's latest version and this synthesis; applying it runs both")


class ImportForm(forms.Form):
    file = forms.FileField(help_text="a policy file (JSON, docs/policies.md)")
    name = forms.CharField(required=False, max_length=Policy._meta.get_field("name").max_length,
                           help_text="blank: the name in the file")
    k = forms.IntegerField(required=False, min_value=1,
                           help_text="Amnesia's anonymization rules only: the k to check (the rules do not hold it)")
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.none(), required=False,
                                     help_text="Amnesia's anonymization rules only: the table whose other columns "
                                               "(their roles and types) complete the policy")

    def __init__(self, *args, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = Dataset.objects.filter(owner=owner, layout=Dataset.TABLE).order_by("name")

    def clean_file(self):
        f = self.cleaned_data["file"]
        if f.size > MAX_POLICY_BYTES:
            raise forms.ValidationError(f"{f.name}: {f.size / 1048576:.1f} MB, more than the limit of "
                                        f"{MAX_POLICY_BYTES // 1048576} MB")
        return f


class ApplyForm(forms.Form):
    version = forms.ModelChoiceField(queryset=PolicyVersion.objects.none(), empty_label=None,
                                     label="Policy version")
    on_new_values = forms.ChoiceField(choices=[(STOP, "stop"), (EXTEND, "extend the hierarchies")], initial=STOP,
                                      required=False, widget=forms.HiddenInput)

    def __init__(self, *args, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        qs = PolicyVersion.objects.filter(policy__owner=owner).select_related("policy").order_by(
            "policy__name", "-number")
        self.versions = qs  # the owner's policy versions, the choices of ``version``
        self.fields["version"].queryset = qs
        self.fields["version"].label_from_instance = lambda v: f"{v.policy.name} — version {v.number}"

    def clean_on_new_values(self):
        return self.cleaned_data.get("on_new_values") or STOP
