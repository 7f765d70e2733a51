"""Advice on a poor result (services.advice), on the result page: why (the QIs left with one value, what one
level lower would cost, counted here by hand) and the fixes, each a run form filled from the job."""

import pytest
from anonymizer_helpers import make_dataset, set_roles
from django.utils.html import escape

from anonymizer_app.engine import Role
from anonymizer_app.services import jobs
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

# 8 people: ages 21-24 and 31-34, two ZIP codes and both sexes in each
TEXT = """age,zip,sex,disease
21,101,M,flu
22,101,F,cold
23,102,M,flu
24,102,F,asthma
31,101,M,flu
32,101,F,cold
33,102,M,cold
34,102,F,flu
"""
HIERARCHIES = {
    "age": "".join(f"{a};{'20s' if a < 30 else '30s'};*\n" for a in (21, 22, 23, 24, 31, 32, 33, 34)),
    "zip": "101;10a;*\n102;10b;*\n",
    "sex": "M;*\nF;*\n",
}


def dataset(user):
    ds = make_dataset(user, text=TEXT, roles={})
    set_roles(ds, {"age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
                   "disease": Role.SENSITIVE})
    for column, text in HIERARCHIES.items():
        h = Hierarchy.from_text(user, f"{column} levels", text, f"{column}.csv")
        h.save()
        col = ds.columns.get(name=column)
        col.hierarchy = h
        col.save()
    return ds


def chosen(ds, levels, k, suppression=0.0):
    """The fixed transformation ``levels`` (age, zip, sex) as a finished run."""
    return jobs.run_job(jobs.create_job(ds, "full-domain", k, suppression, "disease", {"levels": levels}))


def advice_block(html):
    start = html.index('id="advice"')
    return html[start:html.index("</section>", start)]


def test_a_level_below_the_top_too_fine_for_k(client_alice, user):
    ds = dataset(user)
    job = chosen(ds, "2,2,0", k=3)  # age and zip at '*': two classes of 4 (M, F)
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    block = advice_block(html)
    # 2 of the 3 QIs are '*' in every record
    assert "67% of the quasi-identifier cells are &#x27;*&#x27; or the top of their hierarchy: age, zip have one" in block
    # age one level lower: (20s,M) (20s,F) (30s,M) (30s,F) hold 2 records each, below k=3: all 8 records fail
    assert escape("age (level 2 of 2, the top of its hierarchy): one level lower (20s, 30s, …) 8 records would be "
                  "in classes smaller than k=3, more than the 0 the suppression limit allows") in block
    # zip one level lower: (10a,M) ... 2 each: 8 records
    assert escape("zip (level 2 of 2, the top of its hierarchy): one level lower (10a, 10b, …) 8 records") in block
    # fixes: Mondrian (a filled run form), no metric (a chosen transformation has none), 100% suppression is
    # not offered (above 10%), finer hierarchies for age and zip
    assert f'href="/datasets/{ds.pk}/run/?from={job.pk}&amp;algorithm=mondrian">Try Mondrian</a>' in block
    assert "NCP (loss) metric" not in block and "suppression</a>" not in block
    for column in ("age", "zip"):
        pk = ds.columns.get(name=column).pk
        assert f'href="/hierarchies/dataset/{ds.pk}/column/{pk}/">A finer hierarchy for {column}</a>' in block
    assert "A finer hierarchy for sex" not in block
    # the link opens the run form filled with the job, Mondrian chosen
    form = client_alice.get(f"/datasets/{ds.pk}/run/?from={job.pk}&algorithm=mondrian").content.decode()
    assert '<option value="mondrian" selected>Mondrian</option>' in form and 'name="k" value="3"' in form


def test_a_level_below_the_top_that_still_meets_k(client_alice, user):
    ds = dataset(user)
    job = chosen(ds, "2,2,0", k=2)
    block = advice_block(client_alice.get(f"/jobs/{job.pk}/result/").content.decode())
    # age at 20s/30s with sex: four classes of 2, none below k=2
    assert escape("age (level 2 of 2, the top of its hierarchy): one level lower (20s, 30s, …) would still meet "
                  "k=2 (0 records to suppress, within the limit of 0)") in block
    assert f'href="/datasets/{ds.pk}/run/?from={job.pk}&amp;suppression_percent=5">Allow 5% suppression</a>' in block


def test_flash_with_discernibility_is_offered_the_ncp_metric(client_alice, user):
    ds = dataset(user)
    job = jobs.run_job(jobs.create_job(ds, "flash", 4, 0.0, "disease", {"metric": "discernibility"}))
    # k=4: age and sex at '*', zip exact (two classes of 4)
    assert job.result.report["transformation"] == {"age": 2, "zip": 0, "sex": 1}
    block = advice_block(client_alice.get(f"/jobs/{job.pk}/result/").content.decode())
    assert "67% of the quasi-identifier cells" in block
    assert (f'href="/datasets/{ds.pk}/run/?from={job.pk}&amp;option%3Aflash%3Ametric=ncp">Use the NCP (loss) '
            "metric</a>") in block
    # sex one level lower is its leaves: (101,M) (101,F) (102,M) (102,F) hold 2 each, below k=4
    assert escape("sex (level 1 of 1, the top of its hierarchy): one level lower (M, F, …) 8 records would be") in block
    form = client_alice.get(f"/datasets/{ds.pk}/run/?from={job.pk}&option%3Aflash%3Ametric=ncp").content.decode()
    assert '<option value="ncp" selected>ncp</option>' in form


def test_a_useful_result_gets_no_advice(client_alice, user):
    ds = dataset(user)
    job = chosen(ds, "1,0,0", k=1)  # ages to decades, the rest exact: no QI lost, no figure poor
    assert 'id="advice"' not in client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    # one QI '*' in every record (a third of the cells) is advised on: test_one_qi_entirely_generalized_gets_advice
    job = chosen(ds, "1,2,0", k=2)
    assert 'id="advice"' in client_alice.get(f"/jobs/{job.pk}/result/").content.decode()


def test_one_qi_entirely_generalized_gets_advice(client_alice, user):
    # age '*' in every record, zip and sex kept: 1 of 3 QIs (33% of the cells, below the 50% of "most cells")
    ds = dataset(user)
    job = chosen(ds, "2,1,0", k=2)
    assert job.result.report["transformation"] == {"age": 2, "zip": 1, "sex": 0}
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    block = advice_block(html)
    assert escape("age is entirely generalized ('*' or the top of the hierarchy in every record): this "
                  "quasi-identifier is lost to the users of the data (33% of all quasi-identifier cells).") in block
    # one level lower: (20s|30s, 10a|10b, M|F) classes of 1: all 8 records below k=2
    assert escape("one level lower (20s, 30s, …) 8 records would be in classes smaller than k=2") in block
    pk = ds.columns.get(name="age").pk
    assert f'href="/hierarchies/dataset/{ds.pk}/column/{pk}/">A finer hierarchy for age</a>' in block
    assert f'href="/datasets/{ds.pk}/run/?from={job.pk}&amp;algorithm=mondrian">Try Mondrian</a>' in block
    assert "Try k=" not in block  # k=2 is the least


def test_a_lower_k_is_offered(client_alice, user):
    ds = dataset(user)
    job = chosen(ds, "2,2,0", k=4)  # two classes of 4 (M, F)
    block = advice_block(client_alice.get(f"/jobs/{job.pk}/result/").content.decode())
    assert f'href="/datasets/{ds.pk}/run/?from={job.pk}&amp;k=2">Try k=2</a>' in block


def test_a_poor_figure_always_comes_with_advice(user):
    from types import SimpleNamespace

    from anonymizer_app.services import advice

    # the run: NCP 0.567 is "poor" (above 0.5) though no QI is '*' and nothing is suppressed
    report = {"metrics": {"ncp": 0.567, "generalization_height": 0.2, "suppressed": 0}, "input_records": 100,
              "quasi_identifiers": ["a"]}
    assert advice.poor_figures(report, 5) == [("NCP (information loss)", "0.567")]
    report["metrics"]["ncp"] = 0.5
    assert advice.poor_figures(report, 5) == []
    ds = dataset(user)
    job = SimpleNamespace(algorithm="mondrian", k=2, suppression_limit=0.1, dataset=ds, dataset_id=ds.pk, pk=1,
                          config={}, options={}, models=[])
    report = {"metrics": {"ncp": 0.6}, "input_records": 8, "suppressed": 0, "quasi_identifiers": ["age", "zip"],
              "value_counts": {q: {"after": {"values": ["x", "y"], "counts": [4, 4], "distinct": 2}}
                               for q in ("age", "zip")}}
    given = advice.advise(job, report)
    assert given.reasons == ["NCP (information loss) is 0.600, marked poor."]
    assert [f.label for f in given.fixes] == ["Fewer quasi-identifiers"]
    assert given.fixes[0].url == f"/datasets/{ds.pk}/columns/"
