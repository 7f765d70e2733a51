"""Collected static files are public: `collectstatic` under the project's umask (077) writes STATIC_ROOT's files
0644 and its folders 0755 (anonymizer_app/static_storage.py), while uploads and results stay 0600/0700."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command


def _modes(root: Path) -> tuple[dict[str, int], dict[str, int]]:
    files, folders = {}, {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        mode = stat.S_IMODE(path.lstat().st_mode)
        (folders if path.is_dir() else files)[path.relative_to(root).as_posix()] = mode
    return files, folders


@pytest.fixture
def static_root(settings, tmp_path) -> Path:
    old = os.umask(0o077)  # what settings.py sets for every process (ANONYMIZER_UMASK)
    root = tmp_path / "static"
    root.mkdir(mode=0o700)  # as settings.py creates it at start, under the umask
    settings.STATIC_ROOT = root
    yield root
    os.umask(old)


def _sources() -> set[str]:
    """Every static file the finders collect (the project's static/ and the vendored plotly package)."""
    found = set()
    for finder in finders.get_finders():
        for path, storage in finder.list(["CVS", ".*", "*~"]):  # collectstatic's default ignore patterns
            prefix = getattr(storage, "prefix", None)
            found.add(f"{prefix}/{path}" if prefix else path)
    return found


def test_collected_files_are_0644_in_0755_folders(static_root):
    call_command("collectstatic", "--noinput", verbosity=0)
    files, folders = _modes(static_root)
    assert set(files) == _sources() and "js/run.js" in files and "vendor/plotly/plotly.min.js" in files
    assert {name for name, mode in files.items() if mode != 0o644} == set()
    assert {name for name, mode in folders.items() if mode != 0o755} == set()


def test_a_collection_over_an_older_private_one_makes_it_public(static_root):
    old = static_root / "js" / "old.js"  # left 0600 by a collection before this fix
    old.parent.mkdir(mode=0o700)
    old.write_text("// old\n")
    os.chmod(old, 0o600)
    call_command("collectstatic", "--noinput", verbosity=0)
    files, folders = _modes(static_root)
    assert files["js/old.js"] == 0o644 and folders["js"] == 0o755
    assert {mode for mode in files.values()} == {0o644} and {mode for mode in folders.values()} == {0o755}


@pytest.mark.django_db
def test_uploads_stay_private(client, user, settings):
    """The public modes are STATIC_ROOT's only: a dataset's stored upload is still 0600 in a 0700 folder."""
    from anonymizer_helpers import make_dataset

    dataset = make_dataset(user)
    original = Path(dataset.original.path)
    assert stat.S_IMODE(original.stat().st_mode) == 0o600
    assert stat.S_IMODE(original.parent.stat().st_mode) == 0o700
