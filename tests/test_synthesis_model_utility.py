"""Models trained on a synthetic set: the synthesis keeps which rows it held out (the draw and a digest), the form
of a finished synthetic set (/jobs/<id>/result/models/, linked from its page) queues a job of kind
"model-utility" whose models are trained on the synthetic rows and on the original rows the synthesizer read and
tested on the rows it never saw; the held-out rows, the baseline and the separable rule's scores are recomputed
here by hand. Owner-only (others 404); a set drawn from every row is refused by name."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from anonymizer_helpers import make_dataset, queue_without_running, run_jobs_synchronously
from django.utils.html import escape

from anonymizer_app.engine import InputError, Role
from anonymizer_app.models import Job, Result
from anonymizer_app.services import jobs, model_utility, synthesis

pytestmark = pytest.mark.django_db

ROWS = 100


def separable_csv() -> str:
    """100 rows: kind a (rows 0, 2, 4, ...) has y = yes, kind b has y = no; n a whole number 0..99."""
    lines = ["kind,n,y"] + [f"{'a' if i % 2 == 0 else 'b'},{i},{'yes' if i % 2 == 0 else 'no'}" for i in range(ROWS)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def synthetic(user):
    ds = make_dataset(user, text=separable_csv(), filename="sep.csv", name="Sep <b>x</b>",
                      roles={"kind": Role.QUASI_IDENTIFYING, "n": Role.INSENSITIVE, "y": Role.SENSITIVE})
    job = jobs.run_job(synthesis.create_synthesis_job(ds, user, {"method": "cart", "seed": 5, "holdout": 0.25}))
    assert job.status == Job.SUCCEEDED, job.message
    return job


def held_by_hand(rows: int, share: float, seed: int) -> list[int]:
    """The held-out positions drawn as the synthesis says it draws them: numpy's generator with the seed."""
    return sorted(np.random.default_rng(seed).choice(rows, int(round(share * rows)), replace=False).tolist())


def test_the_synthesis_keeps_which_rows_it_held_out(synthetic):
    held = Result.objects.get(job=synthetic).report["synthesis"]["figures"]["holdout"]
    assert {k: held[k] for k in ("share", "seed", "input_rows", "rows")} == {"share": 0.25, "seed": 5,
                                                                              "input_rows": 100, "rows": 25}
    assert len(held["digest"]) == 64
    assert len(held_by_hand(ROWS, 0.25, 5)) == 25


def test_a_utility_job_of_a_synthetic_set_tests_on_the_rows_it_never_saw(client_alice, synthetic, monkeypatch):
    page = client_alice.get(f"/jobs/{synthetic.pk}/synthesis/").content.decode()
    assert f'href="/jobs/{synthetic.pk}/result/models/"' in page
    form = client_alice.get(f"/jobs/{synthetic.pk}/result/models/").content.decode()
    assert 'id="utility-synthetic-help"' in form and 'name="split"' not in form and 'name="folds"' not in form
    assert '<option value="kind">kind</option>' in form  # no column is generalized: a QI can be the target
    assert escape("Sep <b>x</b>") in form and "Sep <b>x</b>" not in form
    submitted = run_jobs_synchronously(monkeypatch)
    response = client_alice.post(f"/jobs/{synthetic.pk}/result/models/", {
        "target": "y", "features": ["kind"], "models": ["logistic", "random_forest"], "encoding": "one-hot",
        "task": "auto", "seed": 3})
    job = Job.objects.get(pk=submitted[0])
    assert response.status_code == 302 and job.kind == Job.MODEL_UTILITY and job.status == Job.SUCCEEDED, job.message
    assert job.options["source_job"] == str(synthetic.pk)
    figures = Result.objects.get(job=job).report["model_utility"]
    held = held_by_hand(ROWS, 0.25, 5)
    read = [i for i in range(ROWS) if i not in held]
    # the test rows: the 25 held out; y of row i is yes exactly when i is even
    assert figures["split"]["test_rows"] == 25 and figures["split"]["train_rows"] == 75
    assert figures["split"]["kind"] == "synthesis-holdout"
    assert figures["holdout"] == {"share": 0.25, "seed": 5, "rows": 25}
    by = {(r["model"], r["trained_on"]): r for r in figures["rows"]}
    assert set(by) == {("logistic", "original"), ("logistic", "synthetic"), ("random_forest", "original"),
                       ("random_forest", "synthetic"), ("baseline", "baseline")}
    # kind decides y in the rows read: a model of them gets every held-out row right
    assert by[("logistic", "original")]["accuracy"] == 1.0 and by[("random_forest", "original")]["accuracy"] == 1.0
    # the baseline: the majority of the rows read (ties: the first in sorted order), scored on the held-out rows
    counts = Counter("yes" if i % 2 == 0 else "no" for i in read)
    majority = sorted(counts, key=lambda v: (-counts[v], v))[0]
    expected = sum(1 for i in held if ("yes" if i % 2 == 0 else "no") == majority) / 25
    assert by[("baseline", "baseline")]["accuracy"] == pytest.approx(expected)
    html = client_alice.get(f"/jobs/{job.pk}/models/").content.decode()
    assert 'id="utility-synthetic-test-rows"' in html and f'href="/jobs/{synthetic.pk}/synthesis/"' in html
    assert "Original, synthetic and baseline" in html
    assert escape("Sep <b>x</b>") in html and "Sep <b>x</b>" not in html
    assert f'href="/jobs/{job.pk}/models/"' in client_alice.get(f"/jobs/{synthetic.pk}/result/models/").content.decode()


def test_the_synthetic_rows_are_the_training_rows(synthetic, monkeypatch):
    """The synthetic model is fitted to the stored synthetic rows: replace them by the rule reversed and every
    held-out row is predicted wrong (accuracy 0), while the model of the original rows read stays right."""
    from anonymizer_app.services import storage

    result = Result.objects.get(job=synthetic)
    stored = storage.read_frame(storage.output_path(result))
    stored["y"] = np.where(stored["kind"] == "a", "no", "yes")
    real_read = storage.read_frame
    monkeypatch.setattr(storage, "read_frame",
                        lambda path, columns=None, **kw: stored[columns].copy() if path == storage.output_path(result)
                        else real_read(path, columns, **kw))
    job = jobs.run_job(model_utility.create_utility_job(synthetic, {"target": "y", "features": ["kind"],
                                                                    "models": ["logistic"]}))
    assert job.status == Job.SUCCEEDED, job.message
    rows = {r["trained_on"]: r for r in Result.objects.get(job=job).report["model_utility"]["rows"]}
    assert rows["original"]["accuracy"] == 1.0 and rows["synthetic"]["accuracy"] == 0.0


def test_a_split_is_refused_and_a_set_without_held_out_rows_too(user, synthetic):
    with pytest.raises(InputError, match="split: the models of a synthetic set are tested on the original rows"):
        model_utility.create_utility_job(synthetic, {"target": "y", "split": "kfold"})
    whole = jobs.run_job(synthesis.create_synthesis_job(synthetic.dataset, user, {"method": "cart", "seed": 1,
                                                                                  "holdout": 0}))
    with pytest.raises(InputError, match="drawn from every original row"):
        model_utility.create_utility_job(whole, {"target": "y"})
    assert not Job.objects.filter(kind=Job.MODEL_UTILITY).exists()


def test_rows_changed_since_the_synthesis_fail_the_job_by_name(synthetic):
    result = Result.objects.get(job=synthetic)
    report = result.report
    report["synthesis"]["figures"]["holdout"]["digest"] = "0" * 64  # as if the held-out rows had other values
    result.report = report
    result.save()
    job = jobs.run_job(model_utility.create_utility_job(synthetic, {"target": "y", "models": ["logistic"]}))
    assert job.status == Job.FAILED
    assert "no longer those this synthetic set was drawn from" in job.message


def test_another_users_synthetic_set_and_figures_are_404(client, other_user, synthetic, monkeypatch):
    queue_without_running(monkeypatch)
    job = model_utility.create_utility_job(synthetic, {"target": "y", "models": ["logistic"]})
    jobs.run_job(job)
    client.force_login(other_user)
    assert client.get(f"/jobs/{synthetic.pk}/result/models/").status_code == 404
    assert client.post(f"/jobs/{synthetic.pk}/result/models/", {"target": "y"}).status_code == 404
    assert client.get(f"/jobs/{job.pk}/models/").status_code == 404
    assert not Job.objects.filter(kind=Job.MODEL_UTILITY, owner=other_user).exists()
