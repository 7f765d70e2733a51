"""Forms of the repository pages (Zenodo, Dataverse): a connection (API token, stored encrypted), importing
a record's file, depositing a result as a draft. Base URLs are chosen from the allow-list, never typed."""

from __future__ import annotations

from django import forms

from .models import RemoteAccount
from .services import exports, remote

SERVICE_CHOICES = list(remote.SERVICES.items())


def _base_choices() -> list[tuple[str, str]]:
    return [(u, u) for u in remote.base_url_choices()]


class ConnectionForm(forms.Form):
    name = forms.CharField(label="Name", max_length=100, help_text="e.g. “Zenodo sandbox”")
    service = forms.ChoiceField(label="Repository", choices=SERVICE_CHOICES)
    base_url = forms.ChoiceField(label="Server", choices=(), help_text="the servers this app may reach")
    token = forms.CharField(label="API token", max_length=2000, strip=True,
                            widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
                            help_text="Zenodo: a personal access token with deposit:write; Dataverse: your API "
                                      "token. Stored encrypted, never shown again.")

    def __init__(self, *args, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.owner = owner
        self.fields["base_url"].choices = _base_choices()

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if self.owner is not None and RemoteAccount.objects.filter(owner=self.owner, name=name).exists():
            raise forms.ValidationError("you already have a connection of this name")
        return name


class AccountChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: RemoteAccount) -> str:
        return f"{obj.name} ({obj.get_service_display()}, {obj.base_url})"


class ImportRemoteForm(forms.Form):
    account = AccountChoiceField(label="Connection", queryset=RemoteAccount.objects.none(), required=False,
                                 empty_label="none: a public record (no token)",
                                 help_text="a connection's token also reaches your own unpublished drafts")
    service = forms.ChoiceField(label="Repository", choices=SERVICE_CHOICES, required=False,
                                help_text="without a connection")
    base_url = forms.ChoiceField(label="Server", choices=(), help_text="without a connection")
    identifier = forms.CharField(label="Record or dataset", max_length=500,
                                 help_text="Zenodo: the record's number, DOI (10.5281/zenodo.123) or page; "
                                           "Dataverse: the dataset's persistent id (doi:10.5072/FK2/ABCDEF) or a "
                                           "file's id")
    file = forms.CharField(label="File", max_length=500, required=False,
                           help_text="its name; left empty: the record's one table file, or a choice is offered")
    name = forms.CharField(label="Dataset name", max_length=200, required=False,
                           help_text="the file's name when left empty")
    token = forms.CharField(label="API token for this import", max_length=2000, required=False, strip=True,
                            widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
                            help_text="without a connection, for a restricted file: used for this import only, "
                                      "kept encrypted while it runs and erased when it ends")

    def __init__(self, *args, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["account"].queryset = RemoteAccount.objects.filter(owner=owner)
        self.fields["base_url"].choices = _base_choices()
        self.fields["base_url"].required = False

    def clean(self):
        data = super().clean()
        if not data.get("account") and "service" in data and not data.get("service"):
            self.add_error("service", "choose the repository (or a connection)")
        if data.get("account") and data.get("token"):
            self.add_error("token", "a connection brings its own token: leave this empty or choose no connection")
        return data


class DepositForm(forms.Form):
    account = AccountChoiceField(label="Connection", queryset=RemoteAccount.objects.none(), empty_label=None)
    dataverse = forms.CharField(label="Dataverse (alias)", max_length=60, required=False,
                                help_text="Dataverse only: the collection the draft dataset is made in")
    title = forms.CharField(label="Title", max_length=300)
    description = forms.CharField(label="Description", max_length=10000, widget=forms.Textarea(attrs={"rows": 4}))
    creators = forms.CharField(label="Creators", max_length=5000, widget=forms.Textarea(attrs={"rows": 2}),
                               help_text="one per line, as Family, Given")
    contact_email = forms.EmailField(label="Contact e-mail", required=False, help_text="required by Dataverse")
    format = forms.ChoiceField(label="File format", choices=[(f.name, f.label) for f in exports.EXPORT_FORMATS.values()])
    drop_suppressed = forms.BooleanField(label="Leave out suppressed records", required=False)
    with_report = forms.BooleanField(label="Add the release report (HTML)", required=False, initial=True)

    def __init__(self, *args, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["account"].queryset = RemoteAccount.objects.filter(owner=owner)

    def clean(self):
        data = super().clean()
        account = data.get("account")
        if account is not None and account.service == "dataverse":
            if not data.get("dataverse", "").strip():
                self.add_error("dataverse", "name the dataverse the draft goes into")
            if not data.get("contact_email"):
                self.add_error("contact_email", "Dataverse needs a contact e-mail address")
        return data

    def creators_list(self) -> list[str]:
        return [line.strip() for line in self.cleaned_data["creators"].splitlines() if line.strip()]
