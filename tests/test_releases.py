"""Releases of one dataset side by side (/datasets/<id>/releases/): a k-anonymous run and a synthetic set in
columns, their figures recomputed here (TVD by counting, exact copies by brute force over the published rows);
another user's dataset, or a job of another dataset, is a 404; names escaped."""

from collections import Counter
from itertools import combinations

import pytest
from anonymizer_helpers import finished_job, make_dataset
from django.utils.html import escape

from anonymizer_app.engine.measure.figure_catalogue import FIGURES, format_kind
from anonymizer_app.models import Result
from anonymizer_app.services import datasets, jobs, results, synthesis
from anonymizer_app.services import releases as release_service

pytestmark = pytest.mark.django_db


def _tvd(a, b):
    ca, cb = Counter(a), Counter(b)
    return 0.5 * sum(abs(ca[k] / len(a) - cb[k] / len(b)) for k in set(ca) | set(cb))


@pytest.fixture
def releases(user):
    ds = make_dataset(user, name="Small <i>x</i>")
    run = finished_job(ds, k=2)
    synthetic = jobs.run_job(synthesis.create_synthesis_job(ds, user, {"method": "cart", "seed": 1, "holdout": 0}))
    return ds, run, synthetic


def test_a_run_and_a_synthetic_set_side_by_side(client_alice, releases):
    ds, run, synthetic = releases
    html = client_alice.get(f"/datasets/{ds.pk}/releases/?job={run.pk}&job={synthetic.pk}").content.decode()
    assert 'id="releases-table"' in html and 'id="chart-releases"' in html
    assert escape("Small <i>x</i>") in html and "Small <i>x</i>" not in html
    columns = ["age", "zip", "sex", "note", "disease"]
    original = [tuple(r) for r in datasets.load_frame(ds, columns=columns).astype(str).to_numpy()]
    expected = []
    for job in (run, synthetic):
        frame, suppressed = results.load_output(Result.objects.get(job=job))
        published = [tuple(r) for r in frame.loc[~suppressed, columns].to_numpy()]
        one = sum(_tvd([(r[i],) for r in original], [(r[i],) for r in published]) for i in range(5)) / 5
        two = [_tvd([(r[i], r[j]) for r in original], [(r[i], r[j]) for r in published])
               for i, j in combinations(range(5), 2)]
        copies = sum(r in original for r in published) / len(published)
        expected.append((one, sum(two) / len(two), copies))
    compared = release_service.compare(ds, [run, synthetic])
    assert "k-anonymity, k = 2" in html and "No formal privacy guarantee" in html
    for row, (one, two, copies) in zip(compared["rows"], expected):
        assert row["tvd_1way_mean"] == pytest.approx(one) and row["tvd_2way_mean"] == pytest.approx(two)
        assert row["exact_copy_share"] == pytest.approx(copies)
        for key, value in (("tvd_1way_mean", one), ("tvd_2way_mean", two), ("exact_copy_share", copies)):
            assert f'<td class="num">{format_kind(FIGURES[key].kind, value)}</td>' in html
    assert "Compared columns: age, zip, sex, note, disease." in html


def test_owner_only_and_jobs_of_this_dataset_only(client, client_alice, other_user, releases, user):
    ds, run, _ = releases
    other_ds = make_dataset(user, name="Other")
    other_run = finished_job(other_ds, k=2)
    assert client_alice.get(f"/datasets/{ds.pk}/releases/?job={other_run.pk}").status_code == 404
    client.force_login(other_user)
    assert client.get(f"/datasets/{ds.pk}/releases/?job={run.pk}").status_code == 404
