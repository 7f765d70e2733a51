"""The result page stays bounded whatever the sensitive column: a numeric one with 100,000 distinct values
(every record its own wage) gives a page under 300 KB with a bounded number of elements, its attack report
capped (the 20 values of highest posterior and one line for the rest) and read on value ranges (deciles of the
table's values), the ranges' homogeneity and l counted here from the published rows by hand. The stored attack
report is itself capped (engine.measure.attack: 50 values per table) and under 200 KB."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.services import results, sensitive_bins

pytestmark = pytest.mark.django_db

ROLES = {"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "region": Role.QUASI_IDENTIFYING,
         "wage": Role.SENSITIVE}


def wage_csv(n: int) -> tuple[str, np.ndarray]:
    """n records, each with its own wage (distinct decimals with ~15 significant digits)."""
    rng = np.random.default_rng(7)
    age = rng.integers(18, 80, n)
    sex = rng.choice(["F", "M"], n)
    region = rng.choice(["north", "south", "east", "west"], n)
    # wages rise with age: most ages' records fall in one decile of the wages (homogeneous on ranges)
    wage = np.empty(n)
    wage[np.argsort(age, kind="stable")] = np.linspace(20.0, 320.0, n) + rng.uniform(0, 1e-3, n)
    lines = ["age,sex,region,wage", *(f"{a},{s},{r},{w!r}" for a, s, r, w in zip(age, sex, region, wage.tolist()))]
    return "\n".join(lines) + "\n", wage


def tags(html: str) -> int:
    """Opening tags: the page's elements before any script runs."""
    return len(re.findall(r"<[A-Za-z]", html))


@pytest.fixture
def wage_job(user):
    text, wage = wage_csv(100_000)
    ds = make_dataset(user, text, "wage.csv", roles=ROLES)
    job = finished_job(ds, k=5, suppression_limit=0.0, sensitive="wage")
    assert job.status == job.SUCCEEDED, job.message
    attack = job.result.report["attack"]["wage"]
    # the report's per-value tables are capped (50 values), what they leave out said, its figures on ranges kept
    assert attack["capped"]["distinct_values"] == 100_000 and len(attack["table_distribution"]) == 50
    assert len(attack["posterior"]) == 50 and len(attack["bins"]["labels"]) == 10
    assert len(json.dumps(job.result.report["attack"])) < 200_000
    return job


def test_the_page_is_bounded_with_100000_distinct_sensitive_values(client_alice, wage_job):
    html = client_alice.get(f"/jobs/{wage_job.pk}/result/").content.decode()
    assert len(html.encode()) < 300_000
    assert tags(html) < 3_000
    charts = json.loads(html.split('<script id="chart-data" type="application/json">')[1].split("</script>")[0])
    ranges = charts["attack"]["wage"]["data"]
    assert len(ranges) == 10  # one trace per range, not per value
    # the ranges stack in value order
    lows = [float(t["name"].split(" – ")[0].replace(",", "")) for t in ranges]
    assert lows == sorted(lows) and lows[0] == pytest.approx(20.0, abs=1e-3)
    attack = html[html.index('id="attack-wage"'):html.index("</section>", html.index('id="attack-wage"'))]
    assert attack.count("<tr>") < 120
    assert "99,980 more values, covering 100% of the records" in attack
    # no 15-digit decimal in the report: values read to 6 significant digits
    assert not re.search(r"\d\.\d{7,}", attack)
    print(f"100,000 distinct wages: {len(html.encode()):,} bytes, {tags(html):,} tags")
    homogeneity_and_l_on_value_ranges(wage_job, html)


def homogeneity_and_l_on_value_ranges(wage_job, html):
    report = wage_job.result.report
    output, suppressed = results.load_output(wage_job.result)
    published = output[~suppressed]
    wage = pd.to_numeric(published["wage"]).to_numpy()
    # deciles of the table's values: 100,000 distinct values with equal shares -> a range every 10,000 values
    ordered = np.sort(wage)
    edges = [ordered[i * 10_000] for i in range(10)] + [ordered[-1]]
    assert report["attack"]["wage"]["bins"]["edges"] == pytest.approx(edges)
    ranges = np.clip(np.searchsorted(edges, wage, side="right") - 1, 0, 9)
    per_class = pd.DataFrame({"ec": published.groupby(["age", "sex", "region"]).ngroup(), "range": ranges})
    distinct = per_class.groupby("ec")["range"].nunique()
    sizes = per_class.groupby("ec").size()
    homogeneous = distinct[distinct == 1].index
    print(f"{len(homogeneous)} homogeneous on ranges, l {int(distinct.min())}, {len(sizes)} ECs")
    expected = f'{len(homogeneous)} ({int(sizes[homogeneous].sum()):,} records)'
    assert f'<dd class="attack-binned-homogeneous">{expected}</dd>' in html
    assert f'<dd class="attack-binned-l">{int(distinct.min())} (the fewest of the 10 ranges in an EC)</dd>' in html
    # the summary card of homogeneous ECs (0 on exact wages) says the ranges' figure beside it
    assert (f'<div class="stat-note" id="homogeneous-ranges">on 10 ranges of wage\'s values: {len(homogeneous)} '
            f'ECs ({int(sizes[homogeneous].sum()):,} records) in one range') in html


def test_a_text_column_with_many_values_gets_a_capped_table(client_alice, user):
    # 60 distinct codes: the 20 of highest posterior, then one line for the other 40
    codes = [f"c{i:02d}" for i in range(60)]
    rows = [f"{20 + i % 7},{'FM'[i % 2]},{codes[i % 60]}" for i in range(600)]
    ds = make_dataset(user, "age,sex,code\n" + "\n".join(rows) + "\n", "codes.csv",
                      roles={"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "code": Role.SENSITIVE})
    job = finished_job(ds, k=2, sensitive="code")
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    attack = html[html.index('id="attack-code"'):html.index("</section>", html.index('id="attack-code"'))]
    posterior = attack[attack.index('class="table table-compact attack-posterior"'):]
    posterior = posterior[:posterior.index("</table>")]
    assert posterior.count("<tr>") == 1 + 20
    assert "40 more values, covering 66.7% of the records" in posterior
    charts = json.loads(html.split('<script id="chart-data" type="application/json">')[1].split("</script>")[0])
    assert [t["name"] for t in charts["attack"]["code"]["data"]][-1] == "other values (48)"
    assert "attack-binned" not in attack  # text: no ranges


def test_past_the_size_bound_the_page_reads_no_whole_column(client_alice, user, monkeypatch):
    from anonymizer_app.services import datasets, storage

    text, _ = wage_csv(300)
    ds = make_dataset(user, text, "wage.csv", roles=ROLES)
    job = finished_job(ds, k=5, sensitive="wage")
    monkeypatch.setattr(sensitive_bins, "BINNED_MAX_ROWS", 299)

    def refuse(*args, **kwargs):
        raise AssertionError("a page read a whole column")

    monkeypatch.setattr(datasets, "load_frame", refuse)
    monkeypatch.setattr(storage, "read_frame", refuse)
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    attack = html[html.index('id="attack-wage"'):html.index("</section>", html.index('id="attack-wage"'))]
    # a report with its figures on ranges (300 wages: more than the attack report's 50 values): read from it
    assert "attack-binned" in attack and 'id="homogeneous-ranges"' in html
    assert "only for tables of up to 299 records" not in re.sub(r"\s+", " ", attack)
    charts = json.loads(html.split('<script id="chart-data" type="application/json">')[1].split("</script>")[0])
    assert len(charts["attack"]["wage"]["data"]) == 10  # the chart's ranges come from the stored report
    # age (62 distinct values): its 30 most frequent values, as stored, drawn in value order (issue 30)
    titles = [a["text"] for a in charts["distributions"]["age"]["layout"]["annotations"]]
    assert titles[0] == "Original (top 30, in value order)" and titles[1].startswith("Anonymized (")
    ages = [float(v) for v in charts["distributions"]["age"]["data"][0]["x"]]
    assert ages == sorted(ages)
