from django import forms
from django.conf import settings
from django.contrib.auth.forms import UserCreationForm

from accounts.models import READ, SCOPE_HELP, SCOPES


class SignupForm(UserCreationForm):
    """Username and password (twice). Django's validators check the password's strength."""

    class Meta(UserCreationForm.Meta):
        fields = ("username",)


class DeleteAccountForm(forms.Form):
    """The account's password, asked again before everything the account owns is deleted."""

    password = forms.CharField(label="Your password", strip=False,
                               widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
                               help_text="Type your password to confirm that you want to delete your account.")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise forms.ValidationError("The password is not correct; your account was not deleted.")
        return password


class ApiTokenForm(forms.Form):
    """A new API key: its name (what it is for: "nightly export", "laptop"), its scopes and its lifetime, at most
    the operator's ANONYMIZER_API_KEY_MAX_DAYS."""

    name = forms.CharField(label="Key name", max_length=100, strip=True,
                           help_text="What the key is for, to recognise it in the list.")
    scopes = forms.MultipleChoiceField(
        label="Scopes", required=False, choices=[(s, SCOPE_HELP[s]) for s in SCOPES], initial=[READ],
        widget=forms.CheckboxSelectMultiple,
        help_text="What the key may do; give it no more than the script needs. None ticked: read only.")
    days = forms.IntegerField(label="Expires after (days)", required=False, min_value=1)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        most, default = settings.ANONYMIZER_API_KEY_MAX_DAYS, settings.ANONYMIZER_API_KEY_DEFAULT_DAYS
        days = self.fields["days"]
        days.max_value, days.initial = most, default
        days.validators.append(_at_most(most))
        days.widget.attrs.update({"min": 1, "max": most})
        days.help_text = f"1 to {most} days (this server's limit); empty: {default}. An expired key is refused."

    def clean_scopes(self) -> list[str]:
        return self.cleaned_data["scopes"] or [READ]

    def clean_days(self) -> int:
        return self.cleaned_data["days"] or settings.ANONYMIZER_API_KEY_DEFAULT_DAYS


def _at_most(most: int):
    def check(value) -> None:
        if value is not None and value > most:
            raise forms.ValidationError(f"at most {most} days: this server's API keys live no longer")
    return check
