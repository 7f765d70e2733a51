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
    job = chosen(ds, "1,2,0", k=2)  # only zip is '*': a third of the cells
    assert 'id="advice"' not in client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
