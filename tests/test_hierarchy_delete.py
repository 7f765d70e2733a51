"""/hierarchies/<id>/delete/: GET asks for confirmation, POST removes the hierarchy and its editor sessions;
columns using it fall back to the default, jobs keep a copy of it."""

import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from erasure_helpers import ZIP_HIERARCHY, media

from anonymizer_app.models import Job
from anonymizer_app.services import datasets, jobs
from anonymizer_app.services.datasets import create_dataset
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


@pytest.fixture
def bound(user):
    ds = create_dataset(user, b"id,city\n1,Rome\n", "people.csv")
    h = Hierarchy.from_text(user, "cities", "Rome;Centre\n", "cities.csv")
    h.save()
    city = ds.columns.get(name="city")
    city.hierarchy = h
    city.save()
    return h, city


def url(h):
    return f"/hierarchies/{h.pk}/delete/"


def test_it_deletes_and_columns_fall_back_to_default(client_alice, bound):
    h, city = bound
    r = client_alice.post(url(h))
    assert r.status_code == 302
    assert r["Location"] == "/hierarchies/"
    assert not Hierarchy.objects.filter(pk=h.pk).exists()
    city.refresh_from_db()
    assert city.hierarchy is None
    html = client_alice.get("/hierarchies/").content.decode()
    assert ("Deleted hierarchy &#x27;cities&#x27;; 1 column(s) now use the default hierarchy: people / city."
            in html)


def test_get_asks_for_confirmation(client_alice, bound):
    h, _ = bound
    r = client_alice.get(url(h))
    assert r.status_code == 200
    html = r.content.decode()
    assert "<h1>Delete the hierarchy cities?</h1>" in html
    assert '<strong id="delete-summary">1 hierarchy and 0 files</strong>' in html
    assert "<li>1 column(s) now use the default hierarchy: people / city</li>" in html
    assert f'action="/hierarchies/{h.pk}/delete/"' in html and "csrfmiddlewaretoken" in html
    assert f'href="/hierarchies/{h.pk}/"' in html  # cancel goes back
    assert Hierarchy.objects.filter(pk=h.pk).exists()


def test_the_pages_link_to_the_confirmation(client_alice, bound):
    h, _ = bound
    assert f'href="/hierarchies/{h.pk}/delete/"' in client_alice.get(f"/hierarchies/{h.pk}/").content.decode()
    assert f'href="/hierarchies/{h.pk}/delete/"' in client_alice.get("/hierarchies/").content.decode()


def test_the_post_needs_the_csrf_token(client, user, bound):
    from django.test import Client

    h, _ = bound
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    assert strict.post(url(h)).status_code == 403
    assert Hierarchy.objects.filter(pk=h.pk).exists()


def test_its_editor_sessions_go_with_it(client_alice, bound, django_capture_on_commit_callbacks):
    h, _ = bound
    assert client_alice.get(f"/hierarchies/{h.pk}/edit/").status_code == 302
    assert any(name.startswith("hierarchy-drafts/") and name.endswith("/state.json") for name in media())
    with django_capture_on_commit_callbacks(execute=True):
        assert client_alice.post(url(h)).status_code == 302
    assert [n for n in media() if n.startswith("hierarchy-drafts/")] == ["hierarchy-drafts/"]


def test_jobs_keep_a_copy_and_still_run(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    dataset = make_dataset(user)
    h = Hierarchy.from_text(user, "zips", ZIP_HIERARCHY, "zips.csv")
    h.save()
    dataset.columns.filter(name="zip").update(hierarchy=h)
    job = jobs.run_job(jobs.create_job(dataset, "flash", 2, 0.25, "disease"))
    r = client_alice.post(url(h))
    assert r.status_code == 302
    html = client_alice.get("/hierarchies/").content.decode()
    assert ("Deleted hierarchy &#x27;zips&#x27;; 1 column(s) now use the default hierarchy: small / zip; "
            "1 job(s) keep a copy of it with their configuration." in html)
    job.refresh_from_db()
    zip_column = next(c for c in job.config["columns"] if c["name"] == "zip")
    assert zip_column["hierarchy"] is None and zip_column["hierarchy_snapshot"]["content"] == ZIP_HIERARCHY
    kept = datasets.hierarchies_from_config(user, job.config)["zip"]
    assert kept.ancestor("10115", 1) == "101**"
    # the lattice of the job is still computed with the hierarchy it ran with
    client_alice.get(f"/jobs/{job.pk}/lattice/data.json")  # queues the evaluation (run at once here)
    evaluation = Job.objects.get(kind=Job.LATTICE)
    assert evaluation.status == Job.SUCCEEDED, evaluation.message
    data = client_alice.get(f"/jobs/{job.pk}/lattice/data.json")
    # the lattice of the kept zip hierarchy (3 levels); the default intervals would give 60 nodes
    assert data.status_code == 200 and data.json()["size"] == 48


def test_other_user_gets_404(client, bound, other_user):
    h, city = bound
    client.force_login(other_user)
    assert client.post(url(h)).status_code == 404
    assert Hierarchy.objects.filter(pk=h.pk).exists()
    city.refresh_from_db()
    assert city.hierarchy == h


def test_anonymous_is_redirected_to_login(client, bound):
    h, _ = bound
    r = client.post(url(h))
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next={url(h)}"
    assert Hierarchy.objects.filter(pk=h.pk).exists()
