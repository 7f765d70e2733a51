"""A synthetic set on the statistics before/after page (/jobs/<id>/result/statistics/): the dataset's rows
against the synthetic rows, column by column; the frequencies recomputed here by counting."""

from collections import Counter

import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.models import Result
from anonymizer_app.services import datasets, jobs, results, synthesis
from anonymizer_app.services import statistics as statistics_service

pytestmark = pytest.mark.django_db


def test_a_synthetic_set_has_statistics_before_and_after(client_alice, user):
    ds = make_dataset(user, name="Small")
    job = jobs.run_job(synthesis.create_synthesis_job(ds, user, {"method": "cart", "seed": 1, "holdout": 0,
                                                               "columns": ["sex", "disease"]}))
    response = client_alice.get(f"/jobs/{job.pk}/result/statistics/")
    assert response.status_code == 200
    figures = statistics_service.result_statistics(Result.objects.get(job=job))
    synthetic, _ = results.load_output(Result.objects.get(job=job))
    original = datasets.load_frame(ds, columns=["sex", "disease"])
    by_column = {c["column"]: c for c in figures["columns"]}
    assert set(by_column) == {"sex", "disease"}
    for name in ("sex", "disease"):
        before = {str(k): v for k, v in Counter(original[name].astype(str)).items()}
        after = {str(k): v for k, v in Counter(synthetic[name].astype(str)).items()}
        assert by_column[name]["before"]["distinct"] == len(before)
        assert by_column[name]["after"]["distinct"] == len(after)
    assert f'href="/jobs/{job.pk}/result/statistics/"' in client_alice.get(f"/jobs/{job.pk}/synthesis/").content.decode()
