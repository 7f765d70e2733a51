"""The release report's PDF stays short (issue 29: 8 pages, 3 of them raw JSON): the configuration is a table of
settings, not the job's JSON (every column's configuration; the job page's download config.json)."""

import io

import pytest
from anonymizer_helpers import make_dataset, people_dataset
from pypdf import PdfReader

from anonymizer_app.services import jobs, release_report

pytestmark = pytest.mark.django_db


def _pdf(client, job) -> tuple[int, str]:
    pages = PdfReader(io.BytesIO(client.get(f"/jobs/{job.pk}/result/release-report.pdf").content)).pages
    return len(pages), "\n".join(p.extract_text() for p in pages)


def test_the_configuration_is_a_table_of_settings(client_alice, user):
    ds = people_dataset(user)
    job = jobs.run_job(jobs.create_job(ds, "flash", 5, 0.05, "disease", {},
                                       [{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]))
    html = client_alice.get(f"/jobs/{job.pk}/result/release-report/").content.decode()
    section = html[html.index('id="report-configuration"'):]
    assert '"algorithm":' not in section and "&quot;algorithm&quot;" not in section
    for row in ("<th scope=\"row\">Algorithm</th><td>Flash (flash)</td>",
                "<th scope=\"row\">Suppression limit</th><td>5%</td>",
                "<th scope=\"row\">Privacy models beside k</th><td>distinct l-diversity (l=2) on disease</td>",
                "<th scope=\"row\">Quasi-identifiers</th><td>age, city_birth, zip_code</td>",
                "<th scope=\"row\">Identifying columns</th><td>id</td>"):
        assert f"<tr>{row}</tr>" in section, row
    assert f'href="/jobs/{job.pk}/config.json" id="report-config-json"' in section
    pages, text = _pdf(client_alice, job)
    settings = text.split("8. Configuration to repeat the run")[1].split("From the command line")[0]
    assert "{" not in settings and "Quasi-identifiers age, city_birth, zip_code" in settings



def test_a_wide_table_adds_no_page_of_json(client_alice, user):
    """60 insensitive columns: their configurations were 60 JSON objects (409 lines) in the PDF."""
    header = ["name", "age", "zip", "sex", "disease"] + [f"extra_{i}" for i in range(60)]
    rows = [["Ann", "34", "10115", "F", "flu"], ["Bob", "36", "10117", "M", "cold"], ["Cid", "35", "10119", "M", "flu"],
            ["Dee", "52", "20095", "F", "cold"], ["Eve", "55", "20097", "F", "flu"], ["Fay", "58", "20099", "F", "cold"]]
    text = "\n".join(",".join(r) for r in [header] + [r + [str(i * j) for j in range(60)] for i, r in enumerate(rows)])
    ds = make_dataset(user, text, "wide.csv")
    job = jobs.run_job(jobs.create_job(ds, "datafly", 2, 0.25, "disease"))
    assert release_report.configuration_json(job).count("\n") == 409  # what the PDF used to print
    pages, pdf_text = _pdf(client_alice, job)
    assert '"role"' not in pdf_text and "extra_59" not in pdf_text.split("8. Configuration to repeat the run")[1]
    # the 60 insensitive columns are one row of the roles table
    flat = " ".join(pdf_text.split())
    assert "60 other columns" in flat and "kept as is: extra_0, extra_1," in flat
    # the same table without its 60 extra columns: the wide one is longer only by the lines of their names (which
    # may carry the last section over one page break), never by a page per column
    narrow = "\n".join(",".join(r) for r in [header[:5]] + rows)
    narrow_job = jobs.run_job(jobs.create_job(make_dataset(user, narrow, "narrow.csv"), "datafly", 2, 0.25, "disease"))
    narrow_pages, _ = _pdf(client_alice, narrow_job)
    assert pages <= narrow_pages + 1, (pages, narrow_pages)
