from django import forms
from django.contrib.auth.forms import UserCreationForm


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
    """The name of a new API key (what it is for: "nightly export", "laptop")."""

    name = forms.CharField(label="Key name", max_length=100, strip=True,
                           help_text="What the key is for, to recognise it in the list.")
