"""Missing values on the web (issue 14): an upload with blank and NA cells in a numeric QI and in an ordered
category; the column pages show the missing value's own path ((null) up to *) and no uncovered value; the
builder page opens on the column's default builder; a run succeeds and publishes the missing cells as the
missing value or its generalizations."""

from __future__ import annotations

import re

import pytest
from anonymizer_helpers import run_jobs_synchronously, set_roles
from django.core.files.uploadedfile import SimpleUploadedFile

from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, Job
from anonymizer_app.services.results import load_output

pytestmark = pytest.mark.django_db

DATA = b"""name,age,education,disease
Ann,34,Bachelors,flu
Bob,,Masters,cold
Cid,35,HS-grad,flu
Dee,NA,Doctorate,asthma
Eve,55,,flu
Fay,58,Some-college,cold
Gus,?,Bachelors,flu
Hal,23,HS-grad,flu
Ida,37,Masters,cold
Jon,52,N/A,asthma
"""
ROLES = {"name": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "education": Role.QUASI_IDENTIFYING,
         "disease": Role.SENSITIVE}


@pytest.fixture
def dataset(client_alice):
    r = client_alice.post("/datasets/upload/", {"file": SimpleUploadedFile("survey.csv", DATA)})
    assert r.status_code == 302
    ds = Dataset.objects.get()
    set_roles(ds, ROLES)
    return ds


def _column_page(client, ds, name):
    column = ds.columns.get(name=name)
    return column, client.get(f"/hierarchies/dataset/{ds.pk}/column/{column.pk}/").content.decode()


def test_blank_and_na_cells_leave_the_types_alone(dataset):
    assert {c.name: c.type for c in dataset.columns.all()}["age"] == "integer"


def _value_rows(html: str) -> list[list[str]]:
    """The column page's values with their labels per level, as cell texts."""
    table = re.search(r'<table class="[^"]*value-labels[^"]*">(.*?)</table>', html, re.S).group(1)
    body = table.split("<tbody>")[1]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def test_the_column_page_shows_the_missing_leaf(client_alice, dataset):
    column, html = _column_page(client_alice, dataset, "age")
    rows = _value_rows(html)
    # three missing ages (blank, NA, ?) are one value, the empty cell (shown as "(missing)"), under (null) up to the root
    assert rows[0] == ["(missing)", "3", "", "(null)", "(null)", "(null)", "*"]
    assert ["34", "1", "34", "[30-35)", "[30-40)", "[20-40)", "*"] in rows
    assert "not covered" not in html
    column, html = _column_page(client_alice, dataset, "education")
    assert ["(missing)", "2", "", "(null)", "(null)", "*"] in _value_rows(html)
    assert "not covered" not in html


def test_the_builder_opens_on_the_default_with_the_natural_order(client_alice, dataset):
    column = dataset.columns.get(name="education")
    html = client_alice.get(f"/hierarchies/dataset/{dataset.pk}/column/{column.pk}/build/").content.decode()
    assert '<a href="?builder=grouping" class="active"' in html
    # HS-grad, Some-college, Bachelors, Masters, Doctorate: the education ladder, not alphabetical
    ladder = ["HS-grad", "Some-college", "Bachelors", "Masters", "Doctorate"]
    positions = [html.index(v, html.index('name="custom_order"')) for v in ladder]
    assert positions == sorted(positions)


def test_a_run_publishes_the_missing_cells(client_alice, dataset, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    r = client_alice.post(f"/datasets/{dataset.pk}/run/", {"algorithm": "flash", "k": 2, "suppression_percent": 0,
                                                          "sensitive": "disease"})
    assert r.status_code == 302
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    frame, suppressed = load_output(job.result)
    published = frame[~suppressed]
    sizes = published.groupby(["age", "education"]).size()
    assert sizes.min() >= 2 and job.result.report["k_achieved"] == int(sizes.min())
    missing_ages = published["age"].iloc[[1, 3, 6]]
    assert set(missing_ages) <= {"", "(null)", "*"} and len(set(missing_ages)) == 1


def test_the_builder_previews_and_saves_a_column_with_missing_values(client_alice, dataset):
    from hierarchy_editor.models import Hierarchy

    column = dataset.columns.get(name="age")
    base = f"/hierarchies/dataset/{dataset.pk}/column/{column.pk}/build/"
    fields = {"builder": "intervals", "lower": "20", "upper": "60", "width": "10", "fanout": "2",
              "outside": "nodes"}
    preview = client_alice.post(f"/hierarchies/dataset/{dataset.pk}/column/{column.pk}/build/preview/", fields)
    assert preview.status_code == 200, preview.content
    data = preview.json()
    # the missing ages are one value, shown with their own path; the tree holds the library's nodes
    assert {"value": "", "count": 3, "labels": ["", "(null)", "(null)", "*"]} in data["values"]
    r = client_alice.post(base, {**fields, "hierarchy_name": "ages by 10"})
    assert r.status_code == 302
    h = Hierarchy.objects.get(name="ages by 10")
    assert h.leaves == 7 and not any(line.startswith(";") for line in h.content.splitlines())
    html = client_alice.get(f"/hierarchies/dataset/{dataset.pk}/column/{column.pk}/").content.decode()
    # bound to the column, the saved hierarchy gets the missing leaf back, as a run does
    assert _value_rows(html)[:2] == [["(missing)", "3", "", "(null)", "(null)", "*"],
                                     ["34", "1", "34", "[30-40)", "[20-40)", "*"]]
