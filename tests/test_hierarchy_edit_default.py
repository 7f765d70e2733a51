""""Edit the tree" on a column's default hierarchy (issue 29, item 5): one POST writes the default as an editable
copy bound to the column and opens the visual editor on it; the editor says the tree replaces the default and
offers the way back."""

import pytest

from anonymizer_app.services.datasets import create_dataset
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

DATA = b"id,education,age\n1,Bachelors,30\n2,HS-grad,41\n3,Masters,52\n4,,30\n5,Doctorate,28\n6,HS-grad,45\n"


@pytest.fixture
def dataset(user):
    return create_dataset(user, DATA, "people.csv")


def page(dataset, column):
    return f"/hierarchies/dataset/{dataset.pk}/column/{column.pk}/"


def test_default_page_offers_edit_the_tree(client_alice, dataset):
    col = dataset.columns.get(name="education")
    html = client_alice.get(page(dataset, col)).content.decode()
    assert (f'<form method="post" action="/hierarchies/dataset/{dataset.pk}/column/{col.pk}/edit-default/" '
            f'class="inline-form">') in html
    assert 'id="edit-default" aria-describedby="edit-default-note">Edit the tree</button>' in html
    assert "the edited tree then replaces the default for this column" in html


def test_one_click_copies_binds_and_opens_the_editor(client_alice, dataset, user):
    col = dataset.columns.get(name="education")
    r = client_alice.post(page(dataset, col) + "edit-default/")
    assert r.status_code == 302
    h = Hierarchy.objects.get(owner=user)
    assert r["Location"] == f"/hierarchies/{h.pk}/edit/?column={col.pk}"
    col.refresh_from_db()
    assert col.hierarchy_id == h.pk
    assert h.name == "education (people) edited default"
    assert h.source_name == "default hierarchy of 'education' (ordered grouping)"
    # the default's leaves without the missing value's (a run adds it again): 4 values, grouped 2 at a time
    assert (h.leaves, h.height) == (4, 2)
    assert h.content == ("HS-grad;{HS-grad, Bachelors};*\nBachelors;{HS-grad, Bachelors};*\n"
                         "Masters;{Masters, Doctorate};*\nDoctorate;{Masters, Doctorate};*\n")
    editor = client_alice.get(r["Location"], follow=True)
    html = editor.content.decode()
    assert editor.status_code == 200 and "page-hierarchy-editor" in html
    assert "You are editing a copy of the default hierarchy of column &#x27;education&#x27;" in html
    assert 'id="replaces-default"' in html and "replaces the default hierarchy</strong> of column" in html
    assert f'action="/hierarchies/dataset/{dataset.pk}/column/{col.pk}/default/"' in html
    # a second click edits the bound copy, no second copy
    again = client_alice.post(page(dataset, col) + "edit-default/")
    assert again["Location"] == f"/hierarchies/{h.pk}/edit/?column={col.pk}"
    assert Hierarchy.objects.filter(owner=user).count() == 1


def test_the_copy_covers_the_column_and_the_way_back(client_alice, dataset):
    col = dataset.columns.get(name="age")
    client_alice.post(page(dataset, col) + "edit-default/")
    html = client_alice.get(page(dataset, col)).content.decode()
    assert "Every value of the column is a leaf" in html  # the blank cell included (its own leaf)
    client_alice.post(page(dataset, col) + "default/")
    col.refresh_from_db()
    assert col.hierarchy is None


def test_get_is_refused_and_other_user_404(client, dataset, other_user, user):
    col = dataset.columns.get(name="education")
    client.force_login(user)
    assert client.get(page(dataset, col) + "edit-default/").status_code == 405
    client.force_login(other_user)
    assert client.post(page(dataset, col) + "edit-default/").status_code == 404
    assert not Hierarchy.objects.exists()


def test_a_default_too_large_for_the_editor_is_refused_before_anything_is_written(client_alice, dataset, settings):
    # education's default: 4 leaves + 2 groups + the root = 7 nodes
    settings.HIERARCHY_EDITOR_MAX_NODES = 6
    col = dataset.columns.get(name="education")
    r = client_alice.post(page(dataset, col) + "edit-default/", follow=True)
    assert r.redirect_chain[-1][0] == page(dataset, col)
    assert ("The default hierarchy of column &#x27;education&#x27; has 7 nodes, more than the tree editor&#x27;s "
            "limit of 6; build a coarser one instead.") in r.content.decode()
    col.refresh_from_db()
    assert col.hierarchy is None and not Hierarchy.objects.exists()
