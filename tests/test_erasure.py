"""services.erasure: a user deleted in the Django admin (one user, and the bulk "delete selected" action, which
deletes a queryset) leaves no file, row or sign-in record of theirs; files no object owns are swept."""

import os
import time

import pytest
from anonymizer_helpers import finished_job, make_dataset
from axes.models import AccessAttempt, AccessLog
from django.contrib.auth import get_user_model
from erasure_helpers import ALL_KINDS, TOP_FOLDERS, kinds, media, populate

from anonymizer_app.models import Column, Dataset, Job, Result
from anonymizer_app.services import erasure, storage
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "root-Secret-789")
    client.force_login(admin)
    return client


def data_of_alice_and_bob(client, user, other_user):
    before = media()
    client.force_login(other_user)
    populate(client, other_user)
    bob = media() - before
    client.force_login(user)
    made = populate(client, user)
    alice = media() - before - bob
    assert kinds(alice) == ALL_KINDS and kinds(bob) == ALL_KINDS
    return before, bob, alice, made


def nothing_of(user_pk: int, username: str) -> dict:
    return {"datasets": Dataset.objects.filter(owner_id=user_pk).count(),
            "columns": Column.objects.filter(dataset__owner_id=user_pk).count(),
            "jobs": Job.objects.filter(owner_id=user_pk).count(),
            "results": Result.objects.filter(job__owner_id=user_pk).count(),
            "hierarchies": Hierarchy.objects.filter(owner_id=user_pk).count(),
            "sign-in records": AccessLog.objects.filter(username=username).count()
            + AccessAttempt.objects.filter(username=username).count()}


NOTHING = {"datasets": 0, "columns": 0, "jobs": 0, "results": 0, "hierarchies": 0, "sign-in records": 0}


def test_deleting_a_user_in_the_admin_leaves_no_file_of_theirs(client, user, other_user, django_user_model,
                                                               django_capture_on_commit_callbacks):
    before, bob, alice, _ = data_of_alice_and_bob(client, user, other_user)
    # upload, table, 2 results, a sensitive table, the lattice folder with lattice, node view and the run's first
    # view (services.lattice_known), the editor session's folder with 2 files, a pending upload
    assert len(alice) == 13
    AccessLog.objects.create(username="alice", ip_address="10.0.0.7", user_agent="test")
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "root-Secret-789")
    client.force_login(admin)
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post(f"/admin/auth/user/{user.pk}/delete/", {"post": "yes"})
    assert r.status_code == 302
    assert not get_user_model().objects.filter(pk=user.pk).exists()
    left = media() - before - bob
    assert sorted(left) == []  # files left after erasure: 0
    assert bob <= media()  # the other user's files are all there
    assert nothing_of(user.pk, "alice") == NOTHING


def test_the_bulk_delete_action_of_the_admin_leaves_no_file_either(client, user, other_user, django_user_model,
                                                                   django_capture_on_commit_callbacks):
    before, bob, alice, _ = data_of_alice_and_bob(client, user, other_user)
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "root-Secret-789")
    client.force_login(admin)
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post("/admin/auth/user/", {"action": "delete_selected", "_selected_action": [user.pk],
                                              "post": "yes"})
    assert r.status_code == 302
    assert sorted(media() - before - bob) == []
    assert bob <= media()
    assert nothing_of(user.pk, "alice") == NOTHING


def test_a_queryset_delete_and_user_delete_leave_no_file(client, user, other_user,
                                                         django_capture_on_commit_callbacks):
    before, bob, _, _ = data_of_alice_and_bob(client, user, other_user)
    with django_capture_on_commit_callbacks(execute=True):
        get_user_model().objects.filter(username="alice").delete()
    assert sorted(media() - before - bob) == []
    with django_capture_on_commit_callbacks(execute=True):
        other_user.delete()
    assert media() - before == TOP_FOLDERS


def test_a_rolled_back_deletion_keeps_the_files(user):
    dataset = make_dataset(user)
    job = finished_job(dataset)
    files = media()
    with pytest.raises(RuntimeError), erasure.transaction.atomic():
        Dataset.objects.filter(pk=dataset.pk).delete()
        raise RuntimeError("something failed after the delete")
    assert Job.objects.filter(pk=job.pk).exists() and media() == files


def test_erase_user_reports_what_it_removed(client, user, django_capture_on_commit_callbacks):
    client.force_login(user)
    populate(client, user)
    files = media()
    preview = erasure.erase_user(user, dry_run=True)
    assert preview.summary() == "1 account, 1 dataset, 4 jobs, 3 results, 1 hierarchy and 11 files"
    assert media() == files  # a dry run removes nothing
    with django_capture_on_commit_callbacks(execute=True):
        done = erasure.erase_user(user)
    assert done.summary() == preview.summary()
    assert done.files == preview.files == sorted(f for f in files if not f.endswith("/"))
    assert media() == TOP_FOLDERS


def test_a_queued_or_running_job_is_cancelled_first(user, django_capture_on_commit_callbacks):
    dataset = make_dataset(user)
    queued = Job.objects.create(owner=user, dataset=dataset, algorithm="datafly", k=2, config={"columns": []})
    Job.objects.create(owner=user, dataset=dataset, algorithm="datafly", k=2, config={"columns": []},
                       status=Job.RUNNING)
    assert erasure.erase_dataset(dataset, dry_run=True).notes == ["2 queued or running jobs will be cancelled first"]
    with django_capture_on_commit_callbacks(execute=True):
        done = erasure.erase_dataset(dataset)
    assert done.notes == ["2 queued or running jobs were cancelled first"]
    assert not Job.objects.filter(pk=queued.pk).exists()


# ---- files no object owns ------------------------------------------------------------------------------------
def _age(name: str, seconds: float) -> None:
    path = storage.media_root() / name
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_the_sweep_removes_old_orphans_only(user):
    dataset = make_dataset(user)
    job = finished_job(dataset)
    owned = media()
    root = storage.media_root()
    orphans = ["tables/dataset-999-0123456789abcdef01234567.parquet", f"tables/dataset-{dataset.pk}.parquet",
               "results/job-00000000-0000-0000-0000-000000000000.parquet",
               "results/job-00000000-0000-0000-0000-000000000000-lattice/lattice.json",
               "hierarchy-drafts/999-1-" + "a" * 32 + "/state.json", "pending-hierarchies/999-" + "b" * 32 + ".json",
               "datasets/" + "c" * 32 + ".csv", "tables/.staging-x.parquet.123.tmp"]
    young = "datasets/" + "d" * 32 + ".csv"  # e.g. an upload being parsed right now
    for name in orphans + [young]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    for name in orphans + sorted(owned):
        _age(name, 7200)
    assert erasure.sweep_orphans(3600, dry_run=True) == sorted(orphans)
    assert erasure.sweep_orphans(3600) == sorted(orphans)
    assert media() == owned | {young} | TOP_FOLDERS  # the emptied lattice and session folders are gone too
    assert Result.objects.get(job=job).output.name in owned
