"""The hierarchy editor's caches (hierarchy_editor/caching.py) on Django's cache framework: parsed hierarchies,
value counts and editing sessions' trees, each entry scoped to its owner's account; the configured
``hierarchy_editor`` cache when there is one, else a local-memory one; an unreachable cache is skipped."""

import pytest
from hierarchy_editor_helpers import CITY, bind, children, make_dataset, make_hierarchy, op, start_session

from anonymizer_app.engine import HierarchyError
from hierarchy_editor import caching, services
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_cache():
    """The local-memory store lives as long as the process: entries of earlier tests (same ids) are dropped."""
    caching.store().clear()


@pytest.fixture
def parses(monkeypatch):
    """How many times a stored hierarchy's text was parsed."""
    calls = []
    real = Hierarchy.to_engine

    def counted(self, column=None):
        calls.append(self.pk)
        return real(self, column)

    monkeypatch.setattr(Hierarchy, "to_engine", counted)
    return calls


def fresh(h: Hierarchy) -> Hierarchy:
    """The row as a new request reads it (no parse kept on the instance)."""
    return Hierarchy.objects.get(pk=h.pk)


def test_a_parsed_hierarchy_is_reused_until_its_text_changes(user, parses):
    h = make_hierarchy(user)
    first = services.parsed_hierarchy(fresh(h))
    again = services.parsed_hierarchy(fresh(h))
    assert len(parses) == 1
    assert list(again.leaves) == list(first.leaves) and again.ancestor("Bari", 2) == "South"
    h.content = CITY.replace("Puglia;South", "Puglia;Islands")
    h.save()
    assert services.parsed_hierarchy(fresh(h)).ancestor("Bari", 2) == "Islands"
    assert len(parses) == 2


def test_entries_are_per_account(user, other_user, parses):
    mine, theirs = make_hierarchy(user), make_hierarchy(other_user)  # the same name and text
    services.parsed_hierarchy(fresh(mine))
    services.parsed_hierarchy(fresh(theirs))
    assert parses == [mine.pk, theirs.pk]  # nothing of one account's entry is read for the other
    assert caching.user_key(user.pk, "parsed", 1) != caching.user_key(other_user.pk, "parsed", 1)
    assert caching.user_key(user.pk, "parsed", 1).startswith(f"hierarchy-editor:parsed:{user.pk}:")


def test_errors_are_not_cached(user, parses):
    h = make_hierarchy(user)
    Hierarchy.objects.filter(pk=h.pk).update(content="a;*\na;b;*\n")
    for _ in range(2):
        with pytest.raises(HierarchyError):
            services.parsed_hierarchy(fresh(h))
    assert len(parses) == 2


def test_a_configured_cache_is_used(settings, user):
    from django.core.cache import caches

    settings.CACHES = {**settings.CACHES, "hierarchy_editor": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "hierarchy-editor-test"}}
    h = make_hierarchy(user)
    services.parsed_hierarchy(fresh(h))
    key = caching.user_key(user.pk, "parsed", h.pk, h.name, h.source_name, h.delimiter, h.on_conflict,
                           services.content_digest(h))
    assert list(caches["hierarchy_editor"].get(key).leaves) == ["Rome", "Milan", "Turin", "Naples", "Bari"]


class Unreachable:
    def get(self, *args, **kwargs):
        raise ConnectionError("cache down")

    set = delete_many = get


def test_an_unreachable_cache_is_skipped(monkeypatch, client_alice, user):
    monkeypatch.setattr(caching, "store", lambda: Unreachable())
    h = make_hierarchy(user)
    bind(make_dataset(user), "city", h)
    assert services.parsed_hierarchy(fresh(h)).ancestor("Rome", 1) == "Lazio"
    assert client_alice.get(f"/hierarchies/{h.pk}/").status_code == 200
    base = start_session(client_alice, h)
    assert op(client_alice, base, op="rename", path=["North"], label="Nord").status_code == 200
    assert children(client_alice, base) == ["Centre", "Nord", "South"]


def test_value_counts_are_read_again_when_the_file_is_read_otherwise(monkeypatch, user):
    reads = []
    real = services.load_frame
    monkeypatch.setattr(services, "load_frame", lambda *a, **k: reads.append(1) or real(*a, **k))
    city = make_dataset(user).columns.get(name="city")
    for _ in range(2):
        assert services.value_counts(city) == {"Rome": 3, "Milan": 1, "Turin": 1, "Naples": 1, "Bari": 1}
    assert len(reads) == 1
    city.dataset.encoding = "latin-1"  # the read format changed: the values may differ
    city.dataset.save()
    assert services.value_counts(city)["Rome"] == 3 and len(reads) == 2


def test_a_state_rewritten_elsewhere_is_not_read_stale(monkeypatch, client_alice, user):
    """Another process (its own local cache) still holds the state an undo left behind; after an edit rewrites
    that state, this process reads the new one, not its stale entry."""
    base = start_session(client_alice, make_hierarchy(user))
    op(client_alice, base, op="rename", path=["North"], label="Nord")
    assert children(client_alice, base) == ["Centre", "Nord", "South"]  # state 1, cached here
    op(client_alice, base, op="undo")
    with monkeypatch.context() as m:  # the next edit happens in another process: this cache does not see it
        m.setattr(caching, "put", lambda key, value: None)
        assert op(client_alice, base, op="add", path=[], label="Islands").status_code == 200  # state 1 again
    assert children(client_alice, base) == ["Centre", "North", "South", "Islands"]  # not the stale "Nord"
