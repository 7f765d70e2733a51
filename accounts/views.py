from functools import lru_cache

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.hashers import check_password
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.forms import ApiTokenForm, DeleteAccountForm, SignupForm
from accounts.models import ApiToken
from accounts.throttling import throttle
from anonymizer_app.services import erasure
from anonymizer_app.views.erasure import confirm_page


@require_http_methods(["GET", "POST"])
@throttle("signup")
def signup(request):
    if request.user.is_authenticated:
        return redirect("/")

    if request.method == "POST":
        form = SignupForm(request.POST)
        if form.is_valid():
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.username}! Your account has been created.")
            return redirect("/")
        messages.error(request, "Please correct the errors below.")
    else:
        form = SignupForm()

    return render(request, "accounts/signup.html", {"form": form})


# `manage.py load_demo`'s account (user demo, password demo: its defaults)
DEMO_USERNAME = DEMO_PASSWORD = "demo"


@lru_cache(maxsize=8)
def _demo_password_holds(password_hash: str) -> bool:
    """Whether the demo user's stored hash is still that of "demo" (one hash check per stored hash, not per
    page view: the login page must not cost a password hash on every GET)."""
    return check_password(DEMO_PASSWORD, password_hash)


def demo_login() -> bool:
    """Whether the login page offers the demo account: only where ANONYMIZER_SHOW_DEMO_LOGIN says so (by default
    DEBUG: a development copy, never a production one unless its settings ask), and only while the account
    exists, is active and still has the password the page would tell everybody."""
    if not getattr(settings, "ANONYMIZER_SHOW_DEMO_LOGIN", settings.DEBUG):
        return False
    user = get_user_model().objects.filter(username=DEMO_USERNAME, is_active=True).only("password").first()
    return user is not None and _demo_password_holds(user.password)


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "demo_login": demo_login(),
                "demo_username": DEMO_USERNAME, "demo_password": DEMO_PASSWORD}


class LogoutView(auth_views.LogoutView):
    """Log out by POST only (Django's LogoutView refuses GET) and say so on the next page."""

    def post(self, request, *args, **kwargs):
        was_logged_in = request.user.is_authenticated
        response = super().post(request, *args, **kwargs)
        if was_logged_in:
            messages.info(request, "You have been logged out.")
        return response


def _account_page(request, token_form=None, new_key: str = "", new_token=None, status: int = 200):
    user = request.user
    return render(request, "accounts/account.html", {
        "datasets": user.datasets.count(), "jobs": user.jobs.count(), "hierarchies": user.hierarchies.count(),
        "retention_days": settings.ANONYMIZER_RESULT_RETENTION_DAYS,
        "tokens": ApiToken.objects.filter(owner=user), "token_form": token_form or ApiTokenForm(),
        "new_key": new_key, "new_token": new_token, "api_docs_url": reverse("api-docs"),
        "max_days": settings.ANONYMIZER_API_KEY_MAX_DAYS,
    }, status=status)


@login_required
@require_GET
def account(request):
    """The signed-in user's account: what it holds, how long results are kept, its API keys, and the way to
    delete it."""
    return _account_page(request)


@login_required
@require_POST
def create_token(request):
    """A new API key: shown on this page once (never stored, never put in a message or the session)."""
    form = ApiTokenForm(request.POST)
    if not form.is_valid():
        return _account_page(request, token_form=form, status=400)
    token, key = ApiToken.issue(request.user, form.cleaned_data["name"], scopes=form.cleaned_data["scopes"],
                                days=form.cleaned_data["days"])
    return _account_page(request, new_key=key, new_token=token, status=201)


@login_required
@require_POST
def revoke_token(request, token_id: int):
    token = get_object_or_404(ApiToken, pk=token_id, owner=request.user)
    token.revoke()
    messages.success(request, f"Revoked the API key {token.name!r} ({token.prefix}…).")
    return redirect(reverse("accounts:account") + "#api-keys")


@login_required
@require_http_methods(["GET", "POST"])
def delete_account(request):
    """Delete the account and everything it owns (datasets, jobs, results, hierarchies, editor sessions, their
    files), after the password is typed again; then log out."""
    user = request.user
    form = DeleteAccountForm(request.POST if request.method == "POST" else None, user=user)
    if request.method == "POST" and form.is_valid():
        username = user.get_username()
        done = erasure.erase_user(user)
        logout(request)
        # after logout: the message travels in the cookie storage, the session is gone
        messages.success(request, f"Your account {username!r} and all its data were deleted: {done.summary()}.")
        return redirect("accounts:login")
    return confirm_page(request, title="Delete your account?", what=f"your account {user.get_username()!r}",
                        preview=erasure.erase_user(user, dry_run=True), action=reverse("accounts:delete"),
                        back_url=reverse("accounts:account"), form=form, button="Delete my account",
                        status=400 if form.errors else 200)
