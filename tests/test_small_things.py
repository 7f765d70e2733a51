"""Issue 29, item 11: the small things a demanding user trips over, each on the page that showed it."""

import re

import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously

from anonymizer_app.models import Job
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db


def test_option_labels_are_words_not_keys(client_alice, user):
    ds = make_dataset(user)
    html = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    labels = re.findall(r'<label for="id_option:[^"]+">([^<]*)</label>', html)
    assert "Keep every lattice node (for the lattice view)" in labels
    assert "Memory (MB)" in labels and "Time budget (s)" in labels
    assert not [label for label in labels if "_" in label], labels
    # the algorithms' summaries name the models as people read them, not by their registry keys
    summary = html[html.index('data-algorithm="flash"'):]
    summary = summary[:summary.index("</div>")]
    assert "models: k-anonymity, distinct l-diversity, entropy l-diversity, recursive (c,l)-diversity" in summary
    assert "distinct-l-diversity" not in summary


def test_a_float_l_reads_as_a_whole_number_when_run_again(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    client_alice.post(f"/datasets/{ds.pk}/run/", {
        "algorithm": "flash", "k": 2, "suppression_percent": 5, "suppressed_rows": "remove", "sensitive": "disease",
        "model:l:enabled": "on", "model:l:variant": "entropy", "model:l:l": "2", "model:l:column": "disease"})
    job = Job.objects.get()
    assert job.models == [{"model": "entropy-l-diversity", "l": 2.0, "column": "disease"}]
    again = client_alice.get(f"/datasets/{ds.pk}/run/?from={job.pk}").content.decode()
    assert 'name="model:l:l" value="2"' in again and 'value="2.0"' not in again
    for page in (f"/jobs/{job.pk}/", "/jobs/", f"/jobs/{job.pk}/result/release-report/"):
        assert not re.search(r"l ?= ?2\.0", client_alice.get(page).content.decode()), page


def test_a_model_an_algorithm_cannot_honour_is_named_by_its_label(user):
    ds = make_dataset(user)
    with pytest.raises(Exception, match=r"^k-Optimize cannot honour distinct l-diversity; algorithms that can"):
        jobs.create_job(ds, "koptimize", 2, 0.0, "disease", models=[{"model": "distinct-l-diversity", "l": 2,
                                                                      "column": "disease"}])
