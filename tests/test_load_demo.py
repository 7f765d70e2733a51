import pytest
from django.contrib.messages import get_messages

from anonymizer_app import demo
from anonymizer_app.models import Dataset

pytestmark = pytest.mark.django_db

URL = "/datasets/demo/"


@pytest.fixture
def people_only(monkeypatch):
    """The Adult demo (30k rows) takes seconds to load; the view is the same with the people demo."""
    monkeypatch.setattr(demo, "DEMOS", [d for d in demo.DEMOS if d[1].startswith("people/")])


def test_it_loads_demo_data(client_alice, user, people_only):
    r = client_alice.post(URL)
    assert r.status_code == 302
    assert r["Location"] == "/"
    ds = Dataset.objects.get()
    assert ds.owner == user and ds.is_demo
    assert ds.n_rows == 100
    assert ds.qi_columns.count() == 3
    assert ds.columns.get(name="age").hierarchy.owner == user
    assert [str(m) for m in get_messages(r.wsgi_request)] == [
        "Loaded the demo datasets: People (Datafly exercise, 100 rows)."]


def test_it_refuses_get(client_alice, people_only):
    assert client_alice.get(URL).status_code == 405
    assert Dataset.objects.count() == 0


def test_it_requires_login(client, people_only):
    r = client.post(URL)
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/?next=")
    assert Dataset.objects.count() == 0
