"""Page weight per page kind on a generated wide table with a continuous sensitive column (issue 29, "pages
stay fast whatever the data"): the result, lattice and risk pages' HTML stays under the 300 KB budget and a
bounded number of elements, and the risk page's figures are computed once per result and options (a page
seen again reads no rows). The timed figures are benchmarks/bench_pages.py's, in Chromium."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.models import Job
from anonymizer_app.services import datasets, jobs

pytestmark = pytest.mark.django_db

HTML_BUDGET = 300 * 1024
ELEMENTS_BUDGET = 6000


def wide_csv(rows: int = 3000, seed: int = 29) -> str:
    """30 columns: QIs age, sex, region; a sensitive income with a distinct decimal on every row."""
    rng = np.random.default_rng(seed)
    data = {"age": rng.integers(18, 91, rows), "sex": rng.choice(["F", "M"], rows),
            "region": rng.choice([f"R{i:02d}" for i in range(20)], rows),
            "income": np.round(rng.lognormal(10.3, 0.6, rows), 2) + np.arange(rows) / 100_000}
    for i in range(26):
        data[f"x{i:02d}"] = np.round(rng.normal(0, 1, rows), 4)
    return pd.DataFrame(data).to_csv(index=False)


@pytest.fixture
def wide_job(user):
    roles = {"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "region": Role.QUASI_IDENTIFYING,
             "income": Role.SENSITIVE}
    dataset = make_dataset(user, wide_csv(), "wide.csv", roles=roles)
    assert dataset.n_rows == 3000 and dataset.columns.count() == 30
    job = jobs.run_job(jobs.create_job(dataset, "flash", 5, 0.05, "income", {"keep_lattice": "yes"}))
    assert job.status == Job.SUCCEEDED, job.message
    return job


def weight(html: str) -> tuple[int, int]:
    return len(html.encode()), len(re.findall(r"<[a-zA-Z]", html))


@pytest.mark.parametrize("page", ["result/", "lattice/", "result/risk/"])
def test_page_html_within_budget(client_alice, wide_job, page):
    resp = client_alice.get(f"/jobs/{wide_job.pk}/{page}")
    assert resp.status_code == 200
    size, elements = weight(resp.content.decode())
    assert size < HTML_BUDGET, f"{page}: {size / 1024:.0f} KB of HTML"
    assert elements < ELEMENTS_BUDGET, f"{page}: {elements} elements"


def test_risk_figures_computed_once(client_alice, wide_job, monkeypatch):
    first = client_alice.get(f"/jobs/{wide_job.pk}/result/risk/").content.decode()

    def no_rows(*args, **kwargs):
        raise AssertionError("the figures were computed again")

    monkeypatch.setattr(datasets, "load_frame", no_rows)
    again = client_alice.get(f"/jobs/{wide_job.pk}/result/risk/")
    assert again.status_code == 200
    strip = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"|nonce="[^"]*"')
    assert strip.sub("", again.content.decode()) == strip.sub("", first)
    # other options are other figures: computed (and refused here, rows being unreadable)
    with pytest.raises(AssertionError, match="computed again"):
        client_alice.get(f"/jobs/{wide_job.pk}/result/risk/?qi=age&qi=sex&qi=region&population=none&threshold=0.1")
