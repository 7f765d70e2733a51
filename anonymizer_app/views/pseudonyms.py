"""The key ring (named pseudonymization keys), the identifying columns' treatments of a dataset, and the
owner's download of a result's re-identification table. Everything is the owner's: another user gets 404.

A key's secret appears in exactly one response, the one that creates it (not cached); after that only its
name and id are shown anywhere. The re-identification table is sent only after the password is re-entered."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import add_never_cache_headers
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods

from accounts.reconfirm import confirm_password
from accounts.throttling import throttle

from ..engine import InputError, Role
from ..engine.run import identifiers as id_rules
from ..models import PseudonymKey, ReidentificationTable
from ..services import pseudonyms
from ..services.vault import VaultError
from .common import owned_dataset, owned_job


class KeyForm(forms.Form):
    name = forms.CharField(max_length=100, label="Name",
                           help_text="One key per set of linked tables: the same value gets the same pseudonym "
                                     "under the same key, in every dataset and release.")
    secret = forms.CharField(required=False, label="Secret (optional, hex)", strip=True,
                             widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
                             help_text="Leave empty for 32 random bytes; or enter your own secret as at least 32 hex "
                                       "digits (e.g. to pseudonymize as another system does).")


class PasswordForm(forms.Form):
    password = forms.CharField(label="Your password", widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}))


def _keys_page(request, form: KeyForm, new_secret: str | None = None, new_key: PseudonymKey | None = None,
               status: int = 200) -> HttpResponse:
    keys = list(PseudonymKey.objects.filter(owner=request.user))
    rows = [{"key": k, "columns": [f"{c.dataset.name}: {c.name}" for c in pseudonyms.columns_using(k)],
             "policies": pseudonyms.policies_using(k)} for k in keys]
    response = render(request, "anonymizer/pseudonym_keys.html",
                      {"form": form, "rows": rows, "new_secret": new_secret, "new_key": new_key}, status=status)
    add_never_cache_headers(response)  # the one response that shows a secret must not be kept by a cache
    return response


@login_required
@require_http_methods(["GET", "POST"])
def keys(request):
    if request.method == "POST":
        form = KeyForm(request.POST)
        if form.is_valid():
            try:
                key, secret = pseudonyms.create_key(request.user, form.cleaned_data["name"],
                                                    form.cleaned_data["secret"] or "")
            except InputError as exc:
                form.add_error(None, str(exc))
            else:
                return _keys_page(request, KeyForm(), new_secret=secret.hex(), new_key=key)
        return _keys_page(request, form, status=400)
    return _keys_page(request, KeyForm())


@login_required
@require_http_methods(["GET", "POST"])
def delete_key(request, key_id: int):
    key = get_object_or_404(PseudonymKey, pk=key_id, owner=request.user)
    if request.method == "POST":
        name = key.name
        pseudonyms.delete_key(key)
        messages.success(request, f"Key {name!r} deleted.")
        return redirect("anonymizer:pseudonym_keys")
    return render(request, "anonymizer/pseudonym_key_delete.html", {
        "key": key, "policies": pseudonyms.policies_using(key),
        "columns": [f"{c.dataset.name}: {c.name}" for c in pseudonyms.columns_using(key)]})


def _posted_rule(post, column) -> dict:
    """The rule of one column from the form's fields (named by the column's position)."""
    p = column.position
    treatment = post.get(f"treatment-{p}", id_rules.REMOVE)
    rule: dict = {"treatment": treatment}
    try:
        if treatment == id_rules.PSEUDONYM:
            rule.update(key=post.get(f"key-{p}", ""), case_sensitive=post.get(f"case-{p}") != "fold",
                        length=int(post.get(f"length-{p}") or id_rules.TOKEN_DEFAULT))
        elif treatment == id_rules.SURROGATE:
            rule.update(length=int(post.get(f"length-{p}") or id_rules.TOKEN_DEFAULT))
        elif treatment == id_rules.MASK:
            regex = post.get(f"regex-{p}", "")
            if regex:
                rule["regex"] = regex
            else:
                rule.update(prefix=int(post.get(f"prefix-{p}") or 0), suffix=int(post.get(f"suffix-{p}") or 0))
            rule["char"] = post.get(f"char-{p}") or "*"
    except ValueError:
        raise InputError(f"column {column.name!r}: lengths, prefix and suffix are whole numbers") from None
    return rule


@login_required
@require_http_methods(["GET", "POST"])
def identifiers(request, dataset_id: int):
    ds = owned_dataset(request, dataset_id)
    columns = pseudonyms.treated_columns(ds)  # identifying columns and the person id
    errors: list[str] = []
    if request.method == "POST":
        try:
            with transaction.atomic():  # all columns or none
                for column in columns:
                    try:
                        pseudonyms.save_rule(column, _posted_rule(request.POST, column))
                    except InputError as exc:
                        errors.append(str(exc))
                if errors:
                    raise InputError("; ".join(errors))
        except InputError:
            for column in columns:
                column.refresh_from_db()
        else:
            messages.success(request, "Treatments of the identifying and person-id columns saved; the next run uses "
                                      "them.")
            return redirect("anonymizer:identifiers", dataset_id=ds.pk)
    keys = list(PseudonymKey.objects.filter(owner=request.user))
    rows = []
    for column in columns:
        rule = dict(column.identifier_rule or {})
        rows.append({"column": column, "person": column.role == Role.PERSON.value, "rule": rule,
                     "treatment": rule.get("treatment", id_rules.REMOVE),
                     "key": str(rule.get("key", "")), "fold": rule.get("case_sensitive") is False})
    return render(request, "anonymizer/identifiers.html", {
        "dataset": ds, "tab": "columns", "rows": rows, "keys": keys, "errors": errors,
        "person_column": next((r["column"].name for r in rows if r["person"]), None),
        "treatments": id_rules.TREATMENTS, "token_default": id_rules.TOKEN_DEFAULT,
        "token_min": id_rules.TOKEN_MIN, "token_max": id_rules.TOKEN_MAX,
    }, status=400 if errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
@throttle("reidentification")
def reidentification(request, job_id):
    job = owned_job(request, job_id)
    table = ReidentificationTable.objects.filter(job=job).first()
    if table is None:
        raise Http404("this result has no re-identification table")
    form = PasswordForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        # a counter of its own per (account, address), not the login lockout (accounts/reconfirm.py): an open
        # session cannot be used to guess the password, nor to lock the owner's log-in
        checked = confirm_password(request, request.user, form.cleaned_data["password"])
        if checked.locked:
            form.add_error("password", checked.message[0].upper() + checked.message[1:] + ".")
        elif checked.ok:
            try:
                text = pseudonyms.reidentification_csv(table)
            except VaultError as exc:  # the server's vault key, not the request: said as it is (docs/vault.md)
                form.add_error(None, str(exc))
                return render(request, "anonymizer/reidentification.html", {"job": job, "form": form}, status=503)
            response = HttpResponse(text, content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = content_disposition_header(
                True, f"{job.dataset.name}-reidentification.csv")
            add_never_cache_headers(response)
            return response
        else:
            form.add_error("password", "That is not your password.")
    return render(request, "anonymizer/reidentification.html", {"job": job, "form": form},
                  status=400 if request.method == "POST" else 200)
