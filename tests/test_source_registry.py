"""A data source is one module plus one registry entry: a new one touches 2 files, its module (here the toy
below, defined in this test) and one registry line (its import at the foot of services/sources/__init__.py;
here ``monkeypatch.setitem(SOURCES, ...)``). A source that declares its parameters and a ``fetch`` writing the
table to a file is then linked from the datasets page, has the generic import page, ``POST
/api/v1/sources/<name>/`` and ``manage.py import_source <name>``, is listed by GET /api/v1/registry/ and GET
/api/v1/sources/, and its table goes through the upload's ingestion; a source read on a worker gives
``queued``, which the import jobs (services/source_imports.py) run for the rows of its name."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from api_helpers import api_for
from cli_helpers import run_command

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.privacy import Parameter
from anonymizer_app.models import Dataset, SourceImport
from anonymizer_app.services import datasets, source_imports, storage
from anonymizer_app.services.sources import SOURCES, ImportSteps, Source, get_source, import_dataset, linked

pytestmark = pytest.mark.django_db


# ---- the toy's whole module ------------------------------------------------------------------------------
def squares(values: dict, folder: Path, progress) -> Path:
    """A table of the first ``rows`` numbers and their squares (or cubes)."""
    path = folder / f"{values['power']}s.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["n", values["power"]])
        for n in range(1, values["rows"] + 1):
            out.writerow([n, n ** (2 if values["power"] == "square" else 3)])
            progress(n)
    return path


def squares_on_a_worker(imp, steps: ImportSteps):
    """The same table written on a worker into the import's staging file (removed whatever happens)."""
    steps.counted(0, 3, "writing 3 rows")
    try:
        with open(steps.staging, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows([["n", "square"], *([n, n * n] for n in range(1, 4))])
        steps.counted(3, 3, "wrote 3 rows")
        steps.check_cancel()
        return datasets.create_dataset(imp.owner, steps.staging, "squares.csv", name=imp.name or None)
    finally:
        steps.staging.unlink(missing_ok=True)


TOY = Source(
    name="squares", label="Squares", summary="The first numbers and their powers.", offer="Import squares…",
    parameters=(Parameter("rows", int, 4, "how many numbers", minimum=1, maximum=1000),
                Parameter("power", str, "square", "which power", choices=("square", "cube"))),
    fetch=squares, queued=squares_on_a_worker)


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(SOURCES, TOY.name, TOY)  # the registry entry
    return TOY


def rows(dataset: Dataset) -> list[list[str]]:
    return datasets.load_frame(dataset).values.tolist()


def test_the_built_in_sources_are_entries():
    assert list(SOURCES) == ["upload", "sql", "dicom", "zenodo", "dataverse"]
    assert [s.element_id for s in linked()] == ["import-sql-link", "upload-dicom-link", "import-remote-link"]
    assert SOURCES["sql"].queued is not None and SOURCES["zenodo"].queued is SOURCES["dataverse"].queued
    with pytest.raises(InputError, match="unknown source 'ftp'; available: upload, sql, dicom, zenodo, dataverse"):
        get_source("ftp")


def test_the_toy_imports_through_the_upload_ingestion(toy, user):
    dataset = import_dataset(user, "squares", {"rows": "3", "power": "cube"}, "Cubes")
    assert (dataset.name, dataset.original_name, dataset.n_rows) == ("Cubes", "cubes.csv", 3)
    assert rows(dataset) == [["1", "1"], ["2", "8"], ["3", "27"]]
    assert [c.type for c in dataset.columns.order_by("position")] == ["integer", "integer"]
    with pytest.raises(InputError, match="rows must be at most 1000, got 5000"):
        import_dataset(user, "squares", {"rows": 5000})
    with pytest.raises(InputError, match="Squares takes power, rows, not colour"):
        import_dataset(user, "squares", {"colour": "red"})
    with pytest.raises(InputError, match="SQL database is imported through anonymizer:import_sql"):
        import_dataset(user, "sql", {})


def test_the_datasets_page_links_the_toy_and_its_page_imports(toy, client_alice, user):
    page = client_alice.get("/").content.decode()
    assert 'id="source-squares-link" href="/datasets/import/squares/">Import squares…</a>' in page
    assert 'href="/datasets/import-sql/"' in page and 'id="import-remote-link"' in page  # the others still
    form = client_alice.get("/datasets/import/squares/").content.decode()
    assert 'name="param:rows"' in form and 'name="param:power"' in form and "<h1>Squares</h1>" in form
    refused = client_alice.post("/datasets/import/squares/", {"param:rows": "0"})
    assert refused.status_code == 400 and "rows must be at least 1, got 0" in refused.content.decode()
    answer = client_alice.post("/datasets/import/squares/", {"param:rows": "2", "name": "Two squares"})
    dataset = Dataset.objects.get(owner=user)
    assert answer.status_code == 302 and answer["Location"] == f"/datasets/{dataset.pk}/"
    assert (dataset.name, rows(dataset)) == ("Two squares", [["1", "1"], ["2", "4"]])
    assert client_alice.get("/datasets/import/sql/").status_code == 404  # its own page, not the generic one


def test_the_api_lists_and_imports_the_toy(toy, user):
    api = api_for(user)
    listed = {s["name"]: s for s in api.get("/api/v1/registry/").json()["sources"]}
    assert listed["squares"]["api"] == "/api/v1/sources/squares/" and listed["squares"]["generic"] is True
    assert listed["squares"]["command"] == "import_source squares"
    assert [p["name"] for p in listed["squares"]["parameters"]] == ["rows", "power"]
    assert listed["sql"]["api"] == "/api/v1/sql/import/" and listed["sql"]["command"] == "import_sql"
    assert api.get("/api/v1/sources/").json() == list(listed.values())
    made = api.post("/api/v1/sources/squares/", {"name": "Three", "parameters": {"rows": 3}})
    assert made.status_code == 201, made.json()
    assert (made.json()["name"], made.json()["n_rows"]) == ("Three", 3)
    bad = api.post("/api/v1/sources/squares/", {"parameters": {"power": "fourth"}})
    assert bad.status_code == 400 and bad.json()["detail"] == "power must be one of square, cube, got 'fourth'"
    assert api.post("/api/v1/sources/zenodo/", {}).status_code == 404


def test_the_command_imports_the_toy(toy, user):
    code, out, err = run_command("import_source", "squares", "--user", user.username, "--rows", "2", "--power",
                                 "cube", "--name", "Two cubes")
    assert code == 0, out + err
    dataset = Dataset.objects.get(owner=user)
    assert out.startswith(f"dataset {dataset.pk} (Two cubes) for {user.username}: 2 rows, 2 columns from Squares")
    assert rows(dataset) == [["1", "1"], ["2", "8"]]
    code, message, _ = run_command("import_source", "squares", "--user", user.username, "--power", "fourth")
    assert code == 2 and "argument --power: invalid choice: 'fourth'" in message


def test_an_import_job_of_the_toy_runs_its_worker_step(toy, user):
    imp = SourceImport.objects.create(owner=user, source="squares", url="", table="squares", name="On a worker")
    imp = source_imports.run(imp)
    assert (imp.status, imp.rows, imp.total, imp.phase) == ("succeeded", 3, 3, "imported 3 rows, 2 columns")
    assert rows(imp.dataset) == [["1", "1"], ["2", "4"], ["3", "9"]]
    assert not list((storage.media_root() / "tables").glob("staging-*"))  # nothing left in the staging folder
