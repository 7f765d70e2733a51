"""Every registered algorithm end to end: run form (with its options) -> job run synchronously ->
result page showing the recoding, the options used and the search statistics."""

import re

import pytest
from anonymizer_helpers import people_dataset, run_jobs_synchronously

from anonymizer_app.engine import ALGORITHMS
from anonymizer_app.forms import option_field_name
from anonymizer_app.models import Job
from anonymizer_app.views.results import HIDDEN_KEYS, plain_label

pytestmark = pytest.mark.django_db

# options chosen on the form (not the defaults), to see them arrive in the engine and on the page
CHOSEN = {"variant": "relaxed", "seed": "7", "memory_mb": "64", "metric": "ncp", "time_budget": "5"}
# The algorithms that need only k (the run form's model); "full-domain" needs explicit levels and
# anatomy l-diversity, both outside this form's scope.
K_ONLY = ["datafly", "flash", "incognito", "samarati", "exhaustive", "koptimize", "mondrian", "kmember", "oka",
          "disk-clustering"]


def _post(client, ds, algorithm: str, extra: dict | None = None):
    data = {"algorithm": algorithm, "k": 3, "suppression_percent": 5, "sensitive": "disease"}
    for p in ALGORITHMS[algorithm].options:
        if p.name in CHOSEN:
            data[option_field_name(algorithm, p)] = CHOSEN[p.name]
    data.update(extra or {})
    return client.post(f"/datasets/{ds.pk}/run/", data)


def _dl(html: str, element_id: str) -> dict:
    start = html.index(f'id="{element_id}"')
    block = html[start:html.index("</dl>", start)]
    return dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", block))


@pytest.mark.parametrize("algorithm", [a for a in K_ONLY if a in ALGORITHMS])
def test_every_algorithm_runs_from_the_form(client_alice, user, monkeypatch, algorithm):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user, hierarchies=False)
    r = _post(client_alice, ds, algorithm)
    job = Job.objects.get()
    assert r.status_code == 302 and r["Location"] == f"/jobs/{job.pk}/"
    assert job.status == Job.SUCCEEDED, job.message
    info = ALGORITHMS[algorithm]
    report = job.result.report
    assert report["algorithm"] == algorithm and report["verified"] is True
    assert report["k_achieved"] >= 3
    expected = {p.name: p.validate(CHOSEN[p.name]) if p.name in CHOSEN else p.default for p in info.options}
    assert report["options"] == expected  # the form's values reached the engine
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    if info.options:
        shown = _dl(html, "options-used")
        # in words, no raw key; an option left unset (no weights, no target) is no setting and not listed
        assert set(shown) == {plain_label(p.name) for p in info.options if report["options"][p.name] not in (None, "")}
    if report["search"]:
        assert 'id="search-stats"' in html
        shown_once = {"metric"} if "metric" in report["options"] else set()  # under the options already
        unset = {key for key, value in report["search"].items() if value is None or value == ""}
        assert len(_dl(html, "search-stats")) == len(set(report["search"]) - HIDDEN_KEYS - shown_once - unset)
    if report["transformation"] is None:
        assert report["recoding"] in ("local", "multidimensional")
        assert 'id="transformation"' not in html
        assert f"<strong>{report['recoding']} recoding ({info.label})" in html
        recoding = html[html.index('id="recoding"'):html.index("</table>", html.index('id="recoding"'))]
        for qi in ("age", "city_birth", "zip_code"):
            after = report["value_counts"][qi]["after"]["distinct"]
            before = report["value_counts"][qi]["before"]["distinct"]
            assert re.search(rf'<td>{qi}</td><td class="num">{before:,}</td><td class="num">{after:,}</td>',
                             recoding)
    else:
        assert 'id="transformation"' in html
    assert f"Counted over all {100 - report['suppressed']} records." in html  # suppressed ones not published


def test_mondrian_says_each_class_has_its_own_ranges(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user, hierarchies=False)
    _post(client_alice, ds, "mondrian", {option_field_name("mondrian", ALGORITHMS["mondrian"].options[0]): "strict"})
    job = Job.objects.get()
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert "multidimensional recoding (Mondrian): each equivalence class has its own ranges" in html
    assert _dl(html, "options-used") == {"Variant": "strict"}


def test_flash_shows_the_nodes_checked(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = people_dataset(user, hierarchies=False)
    _post(client_alice, ds, "flash")
    job = Job.objects.get()
    search = job.result.report["search"]
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    shown = _dl(html, "search-stats")
    for key, value in search.items():
        if isinstance(value, int) and not isinstance(value, bool):
            assert shown[plain_label(key)] == f"{value:,}"
