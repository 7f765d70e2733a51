import pytest
from anonymizer_helpers import make_dataset

pytestmark = pytest.mark.django_db

URL = "/"


def test_it_lists_own_datasets(client_alice, user, other_user):
    make_dataset(user, name="Alice survey")
    make_dataset(other_user, name="Bob secret")
    r = client_alice.get(URL)
    assert r.status_code == 200
    html = r.content.decode()
    assert "Alice survey" in html
    assert "Bob secret" not in html
    assert "small.csv" in html
    # rows, columns and QI count of the dataset
    row = html[html.index("Alice survey"):]
    row = row[:row.index("</tr>")]
    assert '<td class="num">8</td>' in row
    assert '<td class="num">6</td>' in row
    assert '<td class="num">3</td>' in row


def test_it_shows_upload_card_and_demo_button(client_alice):
    html = client_alice.get(URL).content.decode()
    assert 'enctype="multipart/form-data"' in html
    assert 'action="/datasets/upload/"' in html
    assert 'action="/datasets/demo/"' in html
    assert "Load demo data" in html
    assert "No datasets yet." in html
    assert "/static/js/upload.js" in html


def test_it_escapes_dataset_names(client_alice, user):
    make_dataset(user, name="<script>alert(1)</script>")
    html = client_alice.get(URL).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_it_requires_login(client):
    r = client.get(URL)
    assert r.status_code == 302
    assert r["Location"] == "/accounts/login/?next=/"


def test_its_queries_do_not_grow_with_the_datasets(client_alice, user, django_assert_num_queries):
    """The session, the user and one query for the list, with 1 dataset or 9 (no query per row)."""
    make_dataset(user, name="first")
    with django_assert_num_queries(3):
        assert client_alice.get(URL).status_code == 200
    for i in range(8):
        make_dataset(user, name=f"more {i}")
    with django_assert_num_queries(3):
        html = client_alice.get(URL).content.decode()
    assert all(f"more {i}" in html for i in range(8))
