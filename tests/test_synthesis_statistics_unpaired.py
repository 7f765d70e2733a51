"""The statistics before/after page of a synthetic set with fewer rows than the dataset (a share held out of the
synthesis): each table counted on its own, no row paired with another, nothing suppressed; the counts and the
contingency tables recounted here with Counters over each table."""

from collections import Counter

import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.models import Job, Result
from anonymizer_app.services import datasets, jobs, results, synthesis
from anonymizer_app.services import statistics as statistics_service

pytestmark = pytest.mark.django_db


@pytest.fixture
def synthetic(user):
    ds = make_dataset(user, name="Small <i>s</i>")
    job = jobs.run_job(synthesis.create_synthesis_job(ds, user, {"method": "cart", "seed": 3, "holdout": 0.25,
                                                               "columns": ["sex", "disease", "note"]}))
    assert job.status == Job.SUCCEEDED, job.message
    return job


def test_each_table_is_counted_on_its_own(client_alice, synthetic):
    result = Result.objects.get(job=synthetic)
    original = datasets.load_frame(synthetic.dataset, columns=["sex", "disease", "note"])
    made_up, _ = results.load_output(result)
    assert len(made_up) != len(original)  # 6 rows read of 8: nothing can be paired
    figures = statistics_service.result_statistics(result)
    assert figures["records_before"] == len(original) and figures["records_after"] == len(made_up)
    assert figures["suppressed"] == 0
    for column in figures["columns"]:
        name = column["column"]
        assert column["after"]["suppressed"] == 0 and column["after"]["generalized_to_root"] == 0
        assert column["before"]["distinct"] == len(set(original[name].astype(str)))
        assert column["after"]["distinct"] == len(set(made_up[name].astype(str)))
    pair = statistics_service.pair_statistics(result, "sex", "disease")
    for side, table in (("before", original), ("after", made_up)):
        shown = pair[side]["table"]
        cells = Counter(zip(table["sex"].astype(str), table["disease"].astype(str)))
        for r, counts in zip(shown["rows"], shown["counts"]):
            for c, count in zip(shown["columns"], counts):
                assert count == cells[(str(r), str(c))], (side, r, c)
        assert pair[side]["records"] == len(table)


def test_the_page_says_a_synthetic_set_and_shows_no_suppression(client_alice, client, other_user, synthetic):
    html = client_alice.get(f"/jobs/{synthetic.pk}/result/statistics/?a=sex&b=disease").content.decode()
    assert "synthetic row is no original row" in html
    assert "Suppressed</th>" not in html and "of which <code>*</code>" not in html
    assert f'href="/jobs/{synthetic.pk}/synthesis/"' in html and "k = 0" not in html
    assert 'id="pair-association"' in html and 'id="contingency-after"' in html
    client.force_login(other_user)
    assert client.get(f"/jobs/{synthetic.pk}/result/statistics/").status_code == 404
