"""API models trained on a synthetic set: POST /api/v1/runs/<synthesis job>/utility/ queues a model-utility job of
the synthetic set (trained on its rows and on the original rows the synthesizer read, tested on the rows it held
out), GET /api/v1/runs/<job>/utility/ gives its figures; a split of its own, or a set drawn from every row, is a
400 naming it; another user's set and job are 404s."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from api_helpers import api_for, eager_celery, set_roles, upload  # noqa: F401

from anonymizer_app.models import Job

pytestmark = pytest.mark.django_db

DISEASE = ["flu", "flu", "cancer", "flu", "cancer", "hepatitis", "flu", "cancer"]  # api_helpers.SMALL_CSV's


@pytest.fixture
def synthetic(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = upload(api).json()
    set_roles(api, ds["id"])

    def draw(holdout: float) -> str:
        r = api.post(f"/api/v1/synthesis/datasets/{ds['id']}/", {"method": "cart", "seed": 2, "holdout": holdout,
                                                                 "columns": ["age", "disease", "note"]})
        assert r.status_code == 201, r.content
        return r.json()["id"]

    return api, draw


def test_a_job_of_a_synthetic_set_and_its_figures(synthetic):
    api, draw = synthetic
    source = draw(0.25)
    r = api.post(f"/api/v1/runs/{source}/utility/", {"target": "disease", "features": ["age", "note"],
                                                     "models": ["logistic"], "seed": 1})
    assert r.status_code == 201, r.content
    job = Job.objects.get(pk=r.json()["id"])
    assert job.kind == Job.MODEL_UTILITY and job.status == Job.SUCCEEDED, job.message
    body = api.get(f"/api/v1/runs/{job.pk}/utility/").json()
    figures = body["figures"]
    assert figures == job.result.report["model_utility"]
    assert [r["trained_on"] for r in figures["rows"]] == ["original", "synthetic", "baseline"]
    # the held-out rows by hand: round(0.25 * 8) = 2 positions drawn with the synthesis' seed
    held = sorted(np.random.default_rng(2).choice(8, 2, replace=False).tolist())
    read = [d for i, d in enumerate(DISEASE) if i not in held]
    counts = Counter(read)
    majority = sorted(counts, key=lambda v: (-counts[v], v))[0]
    assert figures["split"]["test_rows"] == 2 and figures["split"]["train_rows"] == 6
    assert figures["rows"][-1]["accuracy"] == sum(DISEASE[i] == majority for i in held) / 2


@pytest.mark.parametrize("data,message", [
    ({"target": "disease", "split": "kfold"}, "split: the models of a synthetic set are tested on the original rows"),
    ({"target": "disease", "test_share": 0.5}, "test share: the models of a synthetic set are tested"),
    ({"target": "zip"}, "target: 'zip' is not a synthesized column of this synthetic set"),
])
def test_bad_values_are_400s_naming_them(synthetic, data, message):
    api, draw = synthetic
    r = api.post(f"/api/v1/runs/{draw(0.25)}/utility/", data)
    assert r.status_code == 400
    assert message in str(r.json())


def test_a_set_drawn_from_every_row_is_refused(synthetic):
    api, draw = synthetic
    r = api.post(f"/api/v1/runs/{draw(0)}/utility/", {"target": "disease"})
    assert r.status_code == 400 and "drawn from every original row" in str(r.json())
    assert not Job.objects.filter(kind=Job.MODEL_UTILITY).exists()


def test_another_users_synthetic_set_is_404(synthetic, other_user):
    api, draw = synthetic
    source = draw(0.25)
    job_id = api.post(f"/api/v1/runs/{source}/utility/", {"target": "disease", "models": ["logistic"]}).json()["id"]
    other = api_for(other_user)
    assert other.post(f"/api/v1/runs/{source}/utility/", {"target": "disease"}).status_code == 404
    assert other.get(f"/api/v1/runs/{job_id}/utility/").status_code == 404
