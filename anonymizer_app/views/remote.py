"""Research repositories (Zenodo, Dataverse): the user's connections (API tokens, stored encrypted, shown as
their last four characters), importing a record's file as a dataset (a SourceImport job: the request lists the
record's files and answers at once with the import's page), depositing a result as a new draft
(services/remote.py does the work)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods, require_POST

from accounts.throttling import throttle

from ..engine import InputError
from ..models import Job, RemoteAccount
from ..remote_forms import ConnectionForm, DepositForm, ImportRemoteForm
from ..services import remote, remote_jobs, source_imports
from .common import queue_job, table_result


@sensitive_variables("token")
def _client(account: RemoteAccount | None, service: str = "", base_url: str = "",
            token: str | None = None) -> remote.Client:
    if account is None:  # a public record, or a token typed for this import only
        return remote.make_client(service, base_url, token)
    return remote.account_client(account)


@login_required
@sensitive_post_parameters("token")
@sensitive_variables("d", "form")
@require_http_methods(["GET", "POST"])
def connections(request):
    form = ConnectionForm(request.POST or None, owner=request.user)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        try:
            base = remote.normalize_base_url(d["base_url"])
            remote.verify_token(d["service"], remote.make_client(d["service"], base, d["token"]))
        except remote.RemoteError as exc:
            form.add_error(None, str(exc))
        else:
            account = RemoteAccount(owner=request.user, service=d["service"], base_url=base, name=d["name"])
            account.set_token(d["token"])
            account.save()
            messages.success(request, f"Saved the connection {account.name}; its token is stored encrypted.")
            return redirect("anonymizer:connections")
    accounts = RemoteAccount.objects.filter(owner=request.user)
    return render(request, "anonymizer/connections.html", {"form": form, "accounts": accounts},
                  status=400 if form.errors else 200)


@login_required
@require_POST
def delete_connection(request, account_id: int):
    account = get_object_or_404(RemoteAccount, pk=account_id, owner=request.user)
    account.delete()
    messages.success(request, f"Deleted the connection {account.name} and its token.")
    return redirect("anonymizer:connections")


@login_required
@sensitive_post_parameters("token")
@sensitive_variables("d", "form", "client")
@require_http_methods(["GET", "POST"])
@throttle("sql")
def import_remote(request):
    """The record's files are listed here (one metadata request, bounded by ANONYMIZER_REMOTE_TIMEOUT_SECONDS);
    the download and the ingestion run as a SourceImport job whose page shows the bytes read."""
    form = ImportRemoteForm(request.POST or None, owner=request.user)
    files = None
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        account = d["account"]
        service = account.service if account else d["service"]
        try:
            if account is None and not d["base_url"]:
                raise remote.RemoteError("choose the server (or a connection)")
            client = _client(account, d["service"], d["base_url"], d["token"] or None)
            listed = remote.list_files(service, client, d["identifier"])
            where = f"{remote.SERVICES[service]} {d['identifier'].strip()}"
            tables = [f for f in listed if f.is_table]
            if not d["file"] and len(tables) > 1:
                files = tables  # the user picks one: the same form, the file field filled by the choice
            else:
                chosen = remote.choose_file(listed, d["file"].strip() or None, where)
                imp = source_imports.create_repository(
                    request.user, service, chosen, d["identifier"], account=account, server=d["base_url"],
                    name=d["name"], token=d["token"] or None)
        except InputError as exc:
            form.add_error(None, str(exc))
        else:
            if files is None:
                source_imports.submit(imp)
                return redirect("anonymizer:source_import", import_id=imp.pk)
    return render(request, "anonymizer/import_remote.html",
                  {"form": form, "files": files, "has_accounts": RemoteAccount.objects.filter(owner=request.user).exists()},
                  status=400 if form.errors else 200)


@login_required
@require_http_methods(["GET", "POST"])
@throttle("sql")
def deposit(request, job_id):
    j, res = table_result(request, job_id)
    initial = {"title": f"{j.dataset.name}, anonymized",
               "description": f"{j.dataset.name} anonymized with {j.algorithm} (k={j.k}); "
                              f"{res.report.get('records', '')} records.",
               "contact_email": request.user.email, "format": "csv", "with_report": True}
    if j.kind == Job.SYNTHESIS:  # a synthetic set says what it is and its guarantee
        made = res.report.get("synthesis") or {}
        initial.update(title=f"{j.dataset.name}, synthetic data",
                       description=f"Synthetic data drawn from {j.dataset.name} by {made.get('label', j.algorithm)}; "
                                   f"{(made.get('figures') or {}).get('rows', '')} rows. {made.get('guarantee', '')}")
    form = DepositForm(request.POST or None, owner=request.user, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            job = remote_jobs.create_deposit(j, form)
        except InputError as exc:
            form.add_error(None, str(exc))
        else:  # the uploads run on a worker: the job's page shows them, then links back here
            queue_job(request, job)
            return redirect("anonymizer:job", job_id=job.pk)
    deposits = list(Job.objects.filter(owner=request.user, kind=Job.REPOSITORY_DEPOSIT,
                                       options__source_job=str(j.pk)).order_by("-created")[:20])
    made = next((d for d in deposits if d.status == Job.SUCCEEDED and (d.options or {}).get("draft")), None)
    return render(request, "anonymizer/deposit_remote.html",
                  {"form": form, "job": j, "dataset": j.dataset, "draft": made.options["draft"] if made else None,
                   "deposits": deposits, "has_accounts": RemoteAccount.objects.filter(owner=request.user).exists()},
                  status=400 if form.errors else 200)
