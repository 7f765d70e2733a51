"""GET /hierarchies/<id>/edit/ starts an editing session; /hierarchies/<id>/edit/<token>/ is the editor page."""

import re

import pytest
from hierarchy_editor_helpers import bind, make_dataset, make_hierarchy, start_session

from hierarchy_editor import drafts

pytestmark = pytest.mark.django_db


@pytest.fixture
def hierarchy(user):
    return make_hierarchy(user)


def test_it_starts_a_session_and_renders_the_editor(client_alice, user, hierarchy):
    dataset = make_dataset(user)
    city = bind(dataset, "city", hierarchy)
    base = start_session(client_alice, hierarchy)
    token = re.fullmatch(rf"/hierarchies/{hierarchy.pk}/edit/([0-9a-f]{{32}})/", base).group(1)
    draft = drafts.Draft.load(user.pk, hierarchy.pk, token)
    assert draft.meta == {"column": city.pk}  # checks use the bound column
    assert [c["label"] for c in draft.tree["children"]] == ["Centre", "North", "South"]

    r = client_alice.get(base)
    assert r.status_code == 200
    html = r.content.decode()
    assert "Edit “cities”" in html
    assert "Checks and sizes use column <strong>cities / city</strong>" in html
    assert 'id="editor-config"' in html and "js/hierarchy_editor.js" in html
    assert f'"op": "{base}op/"' in html
    assert "csrfmiddlewaretoken" in html


def test_unbound_hierarchy_has_no_column(client_alice, hierarchy):
    html = client_alice.get(start_session(client_alice, hierarchy)).content.decode()
    assert "Not bound to a dataset column" in html


def test_labels_are_escaped_in_the_page(client_alice, user):
    h = make_hierarchy(user, "<b>x</b>;</script><script>alert(1)</script>\n", name="<i>evil</i>")
    html = client_alice.get(start_session(client_alice, h)).content.decode()
    assert "<i>evil</i>" not in html and "&lt;i&gt;evil&lt;/i&gt;" in html
    assert "</script><script>alert(1)" not in html


def test_expired_session_starts_a_new_one(client_alice, hierarchy):
    r = client_alice.get(f"/hierarchies/{hierarchy.pk}/edit/{'0' * 32}/")
    assert r.status_code == 302
    assert r["Location"] == f"/hierarchies/{hierarchy.pk}/edit/"


def test_other_user_gets_404(client, other_user, hierarchy, user):
    base = start_session(client_for(client, user), hierarchy)
    client.force_login(other_user)
    assert client.get(f"/hierarchies/{hierarchy.pk}/edit/").status_code == 404
    assert client.get(base).status_code == 404


def test_anonymous_is_redirected_to_login(client, hierarchy):
    url = f"/hierarchies/{hierarchy.pk}/edit/"
    r = client.get(url)
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next={url}"
    r = client.get(f"{url}{'a' * 32}/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


def client_for(client, user):
    client.force_login(user)
    return client
