"""docs/api_example.py against a live server: Adult uploaded, roles and ARX hierarchies set, Flash k=5 run
(eagerly inside the request, as tests/test_browser_flow.py runs jobs), polled, report and CSV fetched; the
CSV is checked independently (every published QI combination shared by at least 5 rows)."""

from __future__ import annotations

import csv
import importlib.util
import io
from collections import Counter
from pathlib import Path

import pytest
from api_helpers import eager_celery  # noqa: F401

from accounts.models import ApiToken

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "api_example.py"


def load_example():
    spec = importlib.util.spec_from_file_location("api_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.django_db(transaction=True)
def test_example_on_adult(live_server, eager_celery, demo_datasets, django_user_model, capsys):  # noqa: F811
    user = django_user_model.objects.create_user("example", password="example-pw-123!")
    key = ApiToken.issue(user, "example")[1]
    example = load_example()
    out = example.run(live_server.url, key, demo_datasets / "adult")
    report = out["report"]
    assert report["verified"] is True and report["k_achieved"] >= 5
    assert out["dataset"]["n_rows"] == 30162
    rows = list(csv.DictReader(io.StringIO(out["csv"]), delimiter=";"))
    assert set(rows[0]) == set(example.QIS) | {example.SENSITIVE}
    kept = [r for r in rows if any(r[q] != "*" for q in example.QIS)]
    assert len(rows) == report["records"]
    sizes = Counter(tuple(r[q] for q in example.QIS) for r in kept)
    assert min(sizes.values()) >= 5
    printed = capsys.readouterr().out
    assert "run (submit to done)" in printed and "total" in printed
    with capsys.disabled():  # the timings, for `pytest -s`
        print("\n" + printed)
