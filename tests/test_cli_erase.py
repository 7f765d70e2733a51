"""`manage.py erase dataset|job|hierarchy|user|orphans`: deletes by id or username and prints what was removed.
Run outside a test transaction, as a command runs: files go when the deletion commits, and the command checks."""

import os
import re
import time
from io import StringIO

import pytest
from anonymizer_helpers import finished_job, make_dataset
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from erasure_helpers import TOP_FOLDERS, ZIP_HIERARCHY, media, populate

from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import storage
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db(transaction=True)


def erase(*args) -> str:
    out = StringIO()
    call_command("erase", *args, stdout=out)
    return out.getvalue()


def test_erase_a_dataset(user):
    dataset = make_dataset(user, name="patients")
    job = finished_job(dataset)
    original, table = dataset.original.name, storage.table_name(dataset)
    out = erase("dataset", str(dataset.pk))
    assert out == (f"Deleted dataset 'patients' (id {dataset.pk}) of user 'alice': 1 dataset, 1 job, 1 result and "
                   f"3 files\n"
                   f"  removed {original}\n"
                   f"  removed {storage.result_name(job)}\n"
                   f"  removed {table}\n")
    assert not Dataset.objects.exists() and media() == {"datasets/", "tables/", "results/"}


def test_erase_a_job_and_a_running_one(user):
    dataset = make_dataset(user, name="patients")
    job = finished_job(dataset)
    running = Job.objects.create(owner=user, dataset=dataset, algorithm="datafly", k=2, config={"columns": []},
                                 status=Job.RUNNING)
    out = erase("job", str(job.pk), str(running.pk))
    assert out == (f"Deleted run job {job.pk} on dataset 'patients' of user 'alice': 1 job, 1 result and 1 file\n"
                   f"  removed {storage.result_name(job)}\n"
                   f"Deleted run job {running.pk} on dataset 'patients' of user 'alice': 1 job and 0 files\n"
                   f"  1 queued or running job was cancelled first\n")
    assert not Job.objects.exists()


def test_erase_a_hierarchy(user):
    dataset = make_dataset(user, name="patients")
    h = Hierarchy.from_text(user, "zips", ZIP_HIERARCHY, "zips.csv")
    h.save()
    dataset.columns.filter(name="zip").update(hierarchy=h)
    out = erase("hierarchy", str(h.pk))
    assert out == (f"Deleted hierarchy 'zips' (id {h.pk}) of user 'alice': 1 hierarchy and 0 files\n"
                   f"  1 column(s) now use the default hierarchy: patients / zip\n")
    assert dataset.columns.get(name="zip").hierarchy is None


def test_erase_a_user_with_everything(client, user, other_user):
    client.force_login(other_user)
    populate(client, other_user)
    bobs = media()
    client.force_login(user)
    populate(client, user)
    alices = sorted(n for n in media() - bobs if not n.endswith("/"))
    out = erase("user", "alice")
    assert out == ("Deleted user 'alice': 1 account, 1 dataset, 4 jobs, 3 results, 1 hierarchy and 11 files\n"
                   + "".join(f"  removed {name}\n" for name in alices))
    assert not get_user_model().objects.filter(username="alice").exists()
    assert media() == bobs


def test_a_dry_run_removes_nothing(user):
    dataset = make_dataset(user, name="patients")
    files = media()
    out = erase("dataset", str(dataset.pk), "--dry-run")
    assert out.startswith(f"Would delete dataset 'patients' (id {dataset.pk}) of user 'alice': 1 dataset and "
                          f"2 files\n  would remove datasets/")
    assert Dataset.objects.filter(pk=dataset.pk).exists() and media() == files


def test_erase_orphans(user):
    make_dataset(user)
    owned = media()
    orphan = storage.media_root() / "tables" / "dataset-999.parquet"
    orphan.write_bytes(b"x")
    then = time.time() - 100
    os.utime(orphan, (then, then))
    assert erase("orphans", "--grace", "60", "--dry-run") == (
        "would remove tables/dataset-999.parquet\n1 orphan file found\n")
    assert erase("orphans", "--grace", "60") == (
        "removed tables/dataset-999.parquet\n1 orphan file removed\n")
    assert media() == owned | TOP_FOLDERS - {"results/", "hierarchy-drafts/", "pending-hierarchies/"}


@pytest.mark.parametrize("args, message", [
    (["dataset", "99"], "no dataset with id 99"),
    (["dataset", "people"], "'people' is not a dataset id (a number)"),
    (["job", "123"], "'123' is not a job id (a UUID such as 00000000-0000-0000-0000-000000000000)"),
    (["job", "00000000-0000-0000-0000-000000000001"], "no job with id 00000000-0000-0000-0000-000000000001"),
    (["hierarchy", "7"], "no hierarchy with id 7"),
    (["user", "nobody"], "no user named 'nobody'"),
    (["user"], "erase user: give at least one username"),
    (["dataset"], "erase dataset: give at least one id"),
    (["orphans", "3"], "erase orphans takes no ids"),
])
def test_bad_arguments_are_refused_before_anything_is_deleted(user, args, message):
    dataset = make_dataset(user)
    with pytest.raises(CommandError, match=f"^{re.escape(message)}$"):
        call_command("erase", *args)
    assert Dataset.objects.filter(pk=dataset.pk).exists()


def test_nothing_is_deleted_when_one_of_the_ids_is_unknown(user):
    dataset = make_dataset(user)
    with pytest.raises(CommandError, match="^no dataset with id 99$"):
        call_command("erase", "dataset", str(dataset.pk), "99")
    assert Dataset.objects.filter(pk=dataset.pk).exists()
