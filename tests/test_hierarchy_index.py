"""GET /hierarchies/: the user's library."""

import re

import pytest

from anonymizer_app.services.datasets import create_dataset
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

URL = "/hierarchies/"


def make(owner, name, text, source=""):
    h = Hierarchy.from_text(owner, name, text, source)
    h.save()
    return h


def rows(html):
    body = re.search(r'<table class="table hierarchy-table">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    return [[re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
            for r in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def test_it_lists_own_hierarchies_with_their_columns(client_alice, user, other_user):
    ds = create_dataset(user, b"id,city,zip\n1,Rome,001\n", "people.csv")
    cities = make(user, "cities", "Rome;Lazio;Italy\nMilan;Lombardy;Italy\n", "cities.csv")
    make(user, "zips", "001;00*;*\n002;00*;*\n003;00*;*\n")
    make(other_user, "bob secret", "A;*\n", "bob.csv")
    city = ds.columns.get(name="city")
    city.hierarchy = cities
    city.save()
    r = client_alice.get(URL)
    assert r.status_code == 200
    html = r.content.decode()
    assert "bob secret" not in html and "bob.csv" not in html
    assert rows(html) == [
        ["zips", "—", "3", "2", "no column", "Download Edit Export ▾ ARX CSV ( ; ) Datafly CSV ( , ) Amnesia text Amnesia JSON Delete"],
        ["cities", "cities.csv", "2", "2", "people / city", "Download Edit Export ▾ ARX CSV ( ; ) Datafly CSV ( , ) Amnesia text Amnesia JSON Delete"],
    ]
    assert f'href="/hierarchies/dataset/{ds.pk}/column/{city.pk}/"' in html
    assert f'href="/hierarchies/{cities.pk}/delete/"' in html
    assert f'href="/hierarchies/{cities.pk}/download/"' in html
    assert 'action="/hierarchies/upload/"' in html


def test_it_shows_the_empty_state(client_alice):
    html = client_alice.get(URL).content.decode()
    assert "No hierarchies yet." in html


def test_it_escapes_names(client_alice, user):
    make(user, "<img src=x onerror=alert(1)>", "A;*\n")
    html = client_alice.get(URL).content.decode()
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_anonymous_is_redirected_to_login(client):
    r = client.get(URL)
    assert r.status_code == 302
    assert r["Location"] == "/accounts/login/?next=/hierarchies/"
