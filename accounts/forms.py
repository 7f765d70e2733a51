from django.contrib.auth.forms import UserCreationForm


class SignupForm(UserCreationForm):
    """Username and password (twice). Django's validators check the password's strength."""

    class Meta(UserCreationForm.Meta):
        fields = ("username",)
