"""GET/POST /hierarchies/dataset/<id>/column/<id>/build/: builder form with data defaults; save binds."""

import re

import pytest
from hierarchy_editor_helpers import make_dataset

from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset(user):
    return make_dataset(user)


def url(column):
    return f"/hierarchies/dataset/{column.dataset_id}/column/{column.pk}/build/"


def inputs(html):
    return dict(re.findall(r'<input type="text" name="([^"]+)" value="([^"]*)"', html))


def test_form_has_the_builders_and_data_defaults(client_alice, dataset):
    age = dataset.columns.get(name="age")
    r = client_alice.get(url(age))
    assert r.status_code == 200
    html = r.content.decode()
    assert "Build a hierarchy for “age”" in html
    for key in ("intervals", "grouping", "masking", "dates", "data-driven"):
        assert f'data-builder="{key}"' in html
    assert '<a href="?builder=intervals" class="active"' in html  # numbers start with intervals
    assert inputs(html) == {"lower": "25", "upper": "55", "width": "5", "fanout": "2"}
    assert 'value="age (cities) numeric intervals"' in html
    assert f'data-preview-url="{url(age)}preview/"' in html
    assert "js/hierarchy_editor_build.js" in html


def test_strings_start_with_their_default_builder_and_builder_can_be_chosen(client_alice, dataset):
    city = dataset.columns.get(name="city")
    html = client_alice.get(url(city)).content.decode()
    # cities have no natural order: the default hierarchy, value -> *, is the first preview
    assert '<a href="?builder=flat" class="active"' in html
    html = client_alice.get(url(city), {"builder": "masking"}).content.decode()
    assert '<a href="?builder=masking" class="active"' in html
    assert 'name="from_right"' in html and 'name="mask" value="*"' in html


def test_save_creates_a_hierarchy_and_binds_it(client_alice, dataset, user):
    age = dataset.columns.get(name="age")
    r = client_alice.post(url(age), {"builder": "intervals", "lower": "20", "upper": "60", "width": "10",
                                     "fanout": "2", "outside": "nodes", "hierarchy_name": "ages by 10"})
    assert r.status_code == 302
    assert r["Location"] == f"/hierarchies/dataset/{dataset.pk}/column/{age.pk}/"
    h = Hierarchy.objects.get(owner=user)
    age.refresh_from_db()
    assert age.hierarchy == h
    assert (h.name, h.source_name, h.source_format, h.leaves, h.height, h.delimiter) == (
        "ages by 10", "Numeric intervals builder", "builder", 6, 3, ";")
    assert h.content.splitlines()[:2] == ["28;[20-30);[20-40);*", "30;[30-40);[20-40);*"]
    page = client_alice.get(r["Location"]).content.decode()
    assert "built and now used for column" in page
    assert f'href="/hierarchies/{h.pk}/edit/?column={age.pk}"' in page


def test_save_with_an_error_shows_it_and_saves_nothing(client_alice, dataset):
    age = dataset.columns.get(name="age")
    r = client_alice.post(url(age), {"builder": "intervals", "lower": "60", "upper": "20", "width": "10",
                                     "fanout": "2", "outside": "nodes"})
    assert r.status_code == 400
    assert "upper (20) must be greater than lower (60)" in r.content.decode()
    assert not Hierarchy.objects.exists()


def test_column_page_links_to_the_builder(client_alice, dataset):
    age = dataset.columns.get(name="age")
    html = client_alice.get(f"/hierarchies/dataset/{dataset.pk}/column/{age.pk}/").content.decode()
    assert f'id="build-link" href="{url(age)}"' in html


def test_other_user_gets_404(client, dataset, other_user):
    client.force_login(other_user)
    age = dataset.columns.get(name="age")
    assert client.get(url(age)).status_code == 404
    assert client.post(url(age), {"builder": "intervals"}).status_code == 404


def test_anonymous_is_redirected_to_login(client, dataset):
    age = dataset.columns.get(name="age")
    r = client.get(url(age))
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next={url(age)}"
