"""The columns page's unsaved-changes warning: "Save and run" saves and opens the run form; a form with
errors saves nothing and stays. (The warning itself, shown by static/js/columns_unsaved.js, is driven in
tests/test_browser_guided.py.)"""

import pytest
from anonymizer_helpers import make_dataset
from test_columns import form_data, url

from anonymizer_app.models import Column

pytestmark = pytest.mark.django_db


def test_the_page_carries_the_warning(client_alice, user):
    ds = make_dataset(user)
    html = client_alice.get(url(ds)).content.decode()
    assert 'id="unsaved-columns" role="alert"' in html
    assert '<button type="submit" class="btn btn-primary btn-small" name="next" value="run" id="save-and-run">' in html
    assert f'<a class="btn" href="/datasets/{ds.pk}/run/" id="next-run">Next: run →</a>' in html
    assert "/static/js/columns_unsaved.js" in html


def test_save_and_run_saves_then_opens_the_run_form(client_alice, user):
    ds = make_dataset(user)
    r = client_alice.post(url(ds), {**form_data(ds, note="quasi-identifying"), "next": "run"})
    assert r.status_code == 302 and r["Location"] == f"/datasets/{ds.pk}/run/"
    assert Column.objects.get(dataset=ds, name="note").role == "quasi-identifying"
    html = client_alice.get(r["Location"]).content.decode()
    assert '<span class="chip">note</span>' in html  # the run form's QIs include the saved change


def test_save_and_run_with_an_error_saves_nothing(client_alice, user):
    ds = make_dataset(user)
    r = client_alice.post(url(ds), {**form_data(ds, note="quasi-identifying"), "type:age": "date", "next": "run"})
    assert r.status_code == 200
    assert Column.objects.get(dataset=ds, name="note").role != "quasi-identifying"


def test_save_and_run_is_owner_only(client_alice, other_user):
    ds = make_dataset(other_user)
    assert client_alice.post(url(ds), {**form_data(ds), "next": "run"}).status_code == 404
