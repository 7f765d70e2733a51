"""The set-valued result page stays small whatever the data: a generated transaction dataset of 671 records
over about 6,000 distinct item ids (a liked-movies file's shape), made 2^2-anonymous by dynamic hierarchies,
renders under 300 KB of HTML with a bounded number of tags; the rules, the suppressed items and the
hierarchy built are capped (the most frequent first, "N more" said), the rest downloadable."""

from __future__ import annotations

import random
import re

import pytest
from setvalued_helpers import transaction_dataset

from anonymizer_app.services import jobs, setvalued

pytestmark = pytest.mark.django_db

RECORDS = 671
ITEM_IDS = 6000


def liked_movies() -> str:
    """671 records of 5..80 distinct movie ids, a few popular ids in most records (fixed seed)."""
    rng = random.Random(29)
    lines = []
    for r in range(RECORDS):
        size = rng.randint(5, 80)
        items = {str(1 + int(rng.paretovariate(0.6))) for _ in range(size // 4)}
        items.update(str(rng.randint(1, ITEM_IDS)) for _ in range(size))
        lines.append(f"u{r + 1}," + ",".join(sorted(items, key=int)))
    return "\n".join(lines) + "\n"


@pytest.fixture
def large_result(user):
    text = liked_movies()
    ds = transaction_dataset(user, text, "liked.txt", ",", record_id=True)
    return ds, jobs.run_job(setvalued.create_set_job(ds, "dynamic", 2, 2, True, None))


def test_the_page_of_six_thousand_items_is_bounded(client_alice, large_result):
    ds, job = large_result
    assert job.status == "succeeded", job.error
    tx = setvalued.transactions(ds)
    assert len(tx.items) > 5500
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    tags = len(re.findall(r"<[a-zA-Z]", html))
    print("html bytes", len(html.encode()), "tags", tags)
    assert len(html.encode()) < 300_000
    assert tags < 6000
    assert html.count('class="value-chip') < 2000
    rules = html[html.index('id="rules"'):html.index("</table>", html.index('id="rules"'))]
    assert rules.count("<tr>") == 1 + 15  # the header and RULES_SHOWN rules
    report = job.result.report
    assert f"{len(report['generalization_rules']):,} rules in all; 15 shown." in html


def test_every_cell_and_list_is_capped_and_the_filter_finds_any_rule(client_alice, large_result):
    from anonymizer_app.views.setvalued import CHIPS_PER_CELL, ITEMS_PER_RULE

    _, job = large_result
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    body = html[html.index('id="records"'):]
    for cell in re.findall(r'class="items-(?:before|after)">(.*?)</td>', body[:body.index("</table>")], re.S):
        assert cell.count('class="value-chip') <= CHIPS_PER_CELL
    report = job.result.report
    rules_all = report["generalization_rules"]

    def holding_rules(text: str) -> list[str]:
        return [g for g, members in rules_all.items() if text in g or any(text in x for x in members)]

    # an item of one of the smallest groups (not shown unfiltered) whose text only a few rules hold
    smallest = sorted(rules_all, key=lambda g: (len(rules_all[g]), g))
    wanted = next(x for g in smallest for x in rules_all[g] if len(holding_rules(x)) <= 5)
    found = client_alice.get(f"/jobs/{job.pk}/result/", {"rule": wanted}).content.decode()
    rules = found[found.index('id="rules"'):found.index("</table>", found.index('id="rules"'))]
    shown = re.findall(r'<tr><td>(.*?)</td><td><span class="value-chip changed">([^<]*)</span>', rules, re.S)
    holding = holding_rules(wanted)
    expected = sorted(holding, key=lambda g: (-len(rules_all[g]), g))[:15]
    assert sorted(lab for _, lab in shown) == sorted(expected)
    assert all(cell.count('class="value-chip"') <= ITEMS_PER_RULE for cell, _ in shown)
    assert re.search(r'<span class="value-chip">' + re.escape(wanted) + "</span>", rules)
    merged = sum(1 for row in report["hierarchy_rows"] if row[0] != row[1])
    assert f"The hierarchy built ({merged:,} items merged into groups" in html
