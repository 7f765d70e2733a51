"""Set-up shared by the erasure tests (test_erasure, test_account_delete, test_cli_erase): a user's data of every
kind, made through the pages and services that make it, and a listing of the media tree."""

from __future__ import annotations

import re

from anonymizer_helpers import SMALL_CSV, SMALL_ROLES, set_roles
from django.core.files.uploadedfile import SimpleUploadedFile

from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import comparison, jobs, storage
from hierarchy_editor.models import Hierarchy

ZIP_HIERARCHY = ("10115;101**;1****\n10117;101**;1****\n10119;101**;1****\n20095;200**;2****\n"
                 "20097;200**;2****\n20099;200**;2****\n30001;300**;3****\n40000;400**;4****\n")
CONFLICTING = b"a;x;*\na;y;*\n"  # "a" under two parents: kept pending until a resolution is chosen


def media() -> set[str]:
    """Every file and folder (ending in "/") under MEDIA_ROOT."""
    root = storage.media_root()
    return {p.relative_to(root).as_posix() + ("/" if p.is_dir() else "") for p in root.rglob("*")}


def run(job: Job) -> Job:
    job = jobs.run_job(job)
    assert job.status == Job.SUCCEEDED, job.message
    return job


def populate(client, user) -> dict:
    """A dataset uploaded through the page, a hierarchy bound to one of its columns, a lattice run with its
    solution lattice evaluated and cached (and a node view), an Anatomy run (its sensitive table beside the
    result), a comparison, an editor session and a hierarchy upload waiting for a resolution. ``client`` is
    signed in as ``user``."""
    r = client.post("/datasets/upload/", {"file": SimpleUploadedFile("patients.csv", SMALL_CSV.encode()), "name": ""})
    assert r.status_code == 302, r.content.decode()[:500]
    dataset = Dataset.objects.filter(owner=user).latest("created")
    set_roles(dataset, SMALL_ROLES)
    h = Hierarchy.from_text(user, "zips", ZIP_HIERARCHY, "zips.csv")
    h.save()
    dataset.columns.filter(name="zip").update(hierarchy=h)

    flash = run(jobs.create_job(dataset, "flash", 2, 0.25, "disease"))
    evaluation = Job.objects.create(owner=user, dataset=dataset, kind=Job.LATTICE, algorithm="flash", k=2,
                                    suppression_limit=0.25, sensitive="disease", config=flash.config,
                                    options={"source_job": str(flash.pk)})
    run(evaluation)
    assert client.get(f"/jobs/{flash.pk}/lattice/node.json?levels=0,0,0").status_code == 200
    anatomy = run(jobs.create_job(dataset, "anatomy", 2, 0.25, "disease",
                                  models=[{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]))
    compared = run(comparison.create_comparison(dataset, ["datafly", "mondrian"], [2, 3]))

    r = client.get(f"/hierarchies/{h.pk}/edit/")
    assert r.status_code == 302 and re.search(r"/edit/[0-9a-f]{32}/$", r["Location"]), r
    r = client.post("/hierarchies/upload/", {"file": SimpleUploadedFile("ab.csv", CONFLICTING, "text/csv"),
                                             "on_conflict": "error", "name": "", "format": "auto"})
    assert r.status_code == 400 and 'name="pending"' in r.content.decode()
    return {"dataset": dataset, "hierarchy": h, "flash": flash, "evaluation": evaluation, "anatomy": anatomy,
            "comparison": compared}


def kinds(names) -> set[str]:
    """Which kinds of stored file the names are (to check that a set-up made one of each)."""
    found = set()
    for name in names:
        for kind, pattern in (("upload", r"^datasets/[0-9a-f]{32}\.csv$"),
                              ("table", r"^tables/dataset-\d+-[0-9a-f]{24}\.parquet$"),
                              ("result", r"^results/job-[0-9a-f-]{36}\.parquet$"),
                              ("sensitive table", r"^results/job-[0-9a-f-]{36}-st\.parquet$"),
                              ("lattice cache", r"^results/job-[0-9a-f-]{36}-lattice/lattice\.json$"),
                              ("node view", r"^results/job-[0-9a-f-]{36}-lattice/node-.+\.json$"),
                              ("lattice first view", r"^results/job-[0-9a-f-]{36}-lattice/known\.json$"),
                              ("editor session", r"^hierarchy-drafts/\d+-\d+-[0-9a-f]{32}/state\.json$"),
                              ("pending upload", r"^pending-hierarchies/\d+-[0-9a-f]{32}\.json$")):
            if re.match(pattern, name):
                found.add(kind)
    return found


# the media folders themselves (empty once everything is erased)
TOP_FOLDERS = {"datasets/", "tables/", "results/", "hierarchy-drafts/", "pending-hierarchies/"}
ALL_KINDS = {"upload", "table", "result", "sensitive table", "lattice cache", "node view", "lattice first view",
             "editor session", "pending upload"}
