"""Data at rest: every stored file is 0600 and every folder 0700 (uploads, tables, results, caches, editor
sessions, pending uploads, the SQLite database), no stored name can be guessed, and rows deleted from the
SQLite file are overwritten."""

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from anonymizer_helpers import SMALL_CSV, finished_job, make_dataset
from django.core.files.uploadedfile import SimpleUploadedFile
from erasure_helpers import ALL_KINDS, kinds, populate

from anonymizer_app.models import Dataset
from anonymizer_app.services import lattice, storage

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parent.parent


def modes(root: Path) -> dict[str, str]:
    """name -> permission bits in octal, for everything under ``root``."""
    return {p.relative_to(root).as_posix(): oct(stat.S_IMODE(p.stat().st_mode)) for p in root.rglob("*")}


def not_private(root: Path) -> dict[str, str]:
    return {name: mode for name, mode in modes(root).items()
            if mode != (oct(0o700) if (root / name).is_dir() else oct(0o600))}


def test_every_file_of_a_user_is_0600_and_every_folder_0700(client_alice, user, settings):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 16  # the upload goes through a temporary file, which is moved
    populate(client_alice, user)
    root = storage.media_root()
    assert kinds(modes(root)) == ALL_KINDS
    assert not_private(root) == {}


@pytest.fixture
def permissive_umask():
    """As if the umask of settings.py had been overridden (ANONYMIZER_UMASK=022)."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_the_storage_module_makes_its_files_private_whatever_the_umask(client_alice, user, permissive_umask):
    r = client_alice.post("/datasets/upload/", {"file": SimpleUploadedFile("patients.csv", SMALL_CSV.encode())})
    assert r.status_code == 302
    dataset = make_dataset(user)
    job = finished_job(dataset)
    lattice.write_cache(job, "lattice.json", {"version": 1})
    root = storage.media_root()
    assert len(modes(root)) == 10  # 2 uploads, 2 tables, a result, a cache and 4 folders
    assert not_private(root) == {}


def test_names_cannot_be_guessed(client_alice, user, settings):
    client_alice.post("/datasets/upload/", {"file": SimpleUploadedFile("Patients of Dr Smith.CSV", SMALL_CSV.encode())})
    dataset = Dataset.objects.get()
    assert dataset.original_name == "Patients of Dr Smith.CSV"
    assert re.fullmatch(r"datasets/[0-9a-f]{32}\.csv", dataset.original.name)
    name = storage.table_name(dataset)
    assert re.fullmatch(rf"tables/dataset-{dataset.pk}-[0-9a-f]{{24}}\.parquet", name)
    assert storage.table_path(dataset).is_file()
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40
    assert storage.table_name(dataset) != name  # the tag comes from SECRET_KEY


def test_a_table_lost_to_a_new_secret_key_is_rebuilt(user, settings):
    from anonymizer_app.services import datasets

    dataset = make_dataset(user)
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40
    assert not storage.table_path(dataset).exists()
    assert len(datasets.load_frame(dataset)) == 8
    assert storage.table_path(dataset).is_file()


@pytest.mark.parametrize("existing", [False, True], ids=["new database", "database left 0644 by an old version"])
def test_migrate_leaves_the_sqlite_database_0600(tmp_path, existing):
    db = tmp_path / "db.sqlite3"
    if existing:
        db.touch()
        db.chmod(0o644)
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}", "MEDIA_ROOT": str(tmp_path / "media"), "DEBUG": "1",
           "CELERY_BROKER_DIR": str(tmp_path / "broker")}
    env.pop("ANONYMIZER_UMASK", None)
    done = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in tmp_path.glob("db.sqlite3*")} == {
        p.name: oct(0o600) for p in tmp_path.glob("db.sqlite3*")}
    assert oct(stat.S_IMODE(db.stat().st_mode)) == oct(0o600)
    assert oct(stat.S_IMODE((tmp_path / "media").stat().st_mode)) == oct(0o700)


# In a child process on a SQLite file: a user whose hierarchy holds a marker is deleted; then the database
# file (its write-ahead log checkpointed into it) must not hold the marker in a freed page.
DELETE_A_USER = r"""
import django

django.setup()
from django.contrib.auth import get_user_model
from django.db import connection

from hierarchy_editor.models import Hierarchy



def marker_count() -> int:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return open(connection.settings_dict["NAME"], "rb").read().count(b"MARKER-7f3a9c")


with connection.cursor() as cursor:
    cursor.execute("PRAGMA secure_delete")
    print("secure_delete", cursor.fetchone()[0])
user = get_user_model().objects.create_user("carol", password="carol-Secret-1")
Hierarchy.objects.create(owner=user, name="wards", content="MARKER-7f3a9c;Ward A;*\n" * 400)
print("before", marker_count())
user.delete()
print("after", marker_count())
"""


def test_deleted_rows_are_overwritten_in_the_sqlite_file(tmp_path):
    db = tmp_path / "db.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}", "MEDIA_ROOT": str(tmp_path / "media"), "DEBUG": "1",
           "CELERY_BROKER_DIR": str(tmp_path / "broker")}
    for args in (["manage.py", "migrate", "--noinput", "-v", "0"], ["-c", DELETE_A_USER]):
        done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stderr
    pragma, before, after = (line.split()[1] for line in done.stdout.splitlines())
    # 400 copies stored (one may straddle two overflow pages), none left once deleted
    assert (pragma, int(before) >= 399, after) == ("1", True, "0"), done.stdout
    assert b"".join(p.read_bytes() for p in tmp_path.glob("db.sqlite3*")).count(b"MARKER-7f3a9c") == 0
