"""The result page's attack report and privacy-model cards, and Anatomy's QIT/ST with their downloads."""

import json
import re

import pandas as pd
import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.services import jobs, results

pytestmark = pytest.mark.django_db

# 8 records, two QIs; datafly k=2 generalizes age to decades and keeps sex.
ATTACK_CSV = """age,sex,disease
31,F,flu
35,F,flu
38,M,cold
33,M,asthma
52,F,flu
57,F,cold
44,M,flu
46,M,flu
"""
ROLES = {"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}


def section(html: str, element_id: str) -> str:
    start = html.index(f'id="{element_id}"')
    return re.sub(r">\s+<", "><", html[start:html.index("</section>", start)])


def test_attack_report_counts_the_homogeneous_classes(client_alice, user):
    ds = make_dataset(user, ATTACK_CSV, "attack.csv", roles=ROLES)
    job = finished_job(ds, k=2, sensitive="disease")
    output, suppressed = results.load_output(job.result)
    frame = output[~suppressed]
    distinct = frame.groupby(["age", "sex"])["disease"].nunique()
    sizes = frame.groupby(["age", "sex"]).size()
    homogeneous = distinct[distinct == 1]
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    attack = section(html, "attack")
    assert "Sensitive column disease" in attack
    assert f'<dd class="attack-classes">{len(sizes)}</dd>' in attack
    assert f'<dd class="attack-homogeneous">{len(homogeneous)}</dd>' in attack
    assert f'<dd class="attack-homogeneous-records">{int(sizes[homogeneous.index].sum())}</dd>' in attack
    # the exact figures of this table: ages to decades -> {30s F: flu,flu}, {30s M: cold,asthma},
    # {50s F: flu,cold}, {40s M: flu,flu}: two homogeneous ECs of 2 records each
    assert (len(sizes), len(homogeneous), int(sizes[homogeneous.index].sum())) == (4, 2, 4)
    # posterior of flu: 100% in a homogeneous EC against a 62.5% share of the table
    assert '<tr><td>flu</td><td class="num">62.5%</td><td class="num">100%</td>' in attack
    charts = json.loads(html.split('<script id="chart-data" type="application/json">')[1].split("</script>")[0])
    bars = charts["attack"]["disease"]["data"]
    assert [b["name"] for b in bars] == ["asthma", "cold", "flu"]
    assert bars[0]["x"][0] == "table" and len(bars[0]["x"]) == 5
    # the k card and the model cards
    assert 'data-model="k-anonymity"' in html and "2-anonymity" in html


ANATOMY_CSV = """age,zip,disease
31,101,flu
35,102,=cold
38,103,asthma
33,104,flu
52,105,=cold
57,106,asthma
44,107,flu
46,108,=cold
"""


def test_anatomy_shows_and_downloads_the_qit_and_the_st(client_alice, user):
    ds = make_dataset(user, ANATOMY_CSV, "anatomy.csv",
                      roles={"age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE})
    job = jobs.run_job(jobs.create_job(ds, "anatomy", 2, 0.0, "disease",
                                       models=[{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]))
    assert job.status == "succeeded", job.message
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert 'id="qit-table"' in html and 'id="st-table"' in html
    assert 'id="anonymized-table"' not in html  # no side-by-side generalized table for Anatomy
    qit = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv")
    st = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv?table=st")
    assert st.status_code == 200 and "sensitive-table" in st["Content-Disposition"]
    qit_frame = pd.read_csv(pd.io.common.StringIO(b"".join(qit).decode() if hasattr(qit, "streaming_content")
                                                  else qit.content.decode()), dtype=str)
    st_frame = pd.read_csv(pd.io.common.StringIO(st.content.decode()), dtype=str)
    assert list(qit_frame.columns) == ["age", "zip", "group"]
    assert list(st_frame.columns) == ["group", "disease", "count"]
    assert "'=cold" in set(st_frame["disease"])  # formulas neutralized
    # every group of the ST: at least 2 distinct values; counts add up to the records
    assert (st_frame.groupby("group")["disease"].nunique() >= 2).all()
    assert st_frame["count"].astype(int).sum() == 8
    # the QIT's groups are the ST's groups, with as many records
    assert qit_frame["group"].value_counts().sort_index().to_dict() == \
        st_frame.assign(count=st_frame["count"].astype(int)).groupby("group")["count"].sum().sort_index().to_dict()
