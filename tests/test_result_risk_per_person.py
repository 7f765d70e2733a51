"""A result's risk before and after (/jobs/<id>/result/risk/) on a table with a person-id column: the figures per
person, before (the dataset's rows) and after (the published rows, each traced to its dataset row's person),
labelled "per person" beside the record-level ones; counted here in plain Python."""

from __future__ import annotations

import csv
import io
import re

import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.services import results, storage

pytestmark = pytest.mark.django_db

# QIs vary across a patient's records (age at the test): a patient's records fall in several classes
LONG_CSV = "patient,age,sex\n" + "".join(
    f"P{p},{age},{sex}\n" for p, ages, sex in [
        (1, (31, 32, 45), "f"), (2, (31,), "f"), (3, (33, 47), "m"), (4, (34,), "m"), (5, (46, 48), "f"),
        (6, (35, 36), "m"), (7, (41,), "m"), (8, (42, 43, 44), "f"), (9, (38,), "f"), (10, (49,), "m")]
    for age in ages)
ROLES = {"patient": Role.PERSON, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING}


def figures(sets: dict[str, set]) -> dict:
    sharing = [sum(1 for q in sets.values() if s <= q) for s in sets.values()]
    return {"persons": len(sets), "highest": max(1 / n for n in sharing),
            "uniques": sum(1 for n in sharing if n == 1),
            "marketer": len({frozenset(s) for s in sets.values()}) / len(sets)}


def pct(x: float) -> str:
    return f"{float(f'{x * 100:.3g}'):g}%"


def rows_of(html: str) -> dict[str, tuple[str, ...]]:
    body = html[html.index('id="per-person-before-after"'):]
    body = body[:body.index("</table>")]
    out = {}
    for label, cells in re.findall(r'<th scope="row"[^>]*>([^<]+)</th>((?:<td class="num">[^<]*</td>)+)', body):
        out[label] = tuple(re.findall(r'<td class="num">([^<]*)</td>', cells))
    return out


def test_before_and_after_per_person(client_alice, user):
    job = finished_job(make_dataset(user, LONG_CSV, "long.csv", roles=ROLES), k=2, suppression_limit=0.2)
    assert job.status == "succeeded", job.message
    resp = client_alice.get(f"/jobs/{job.pk}/result/risk/")
    assert resp.status_code == 200
    html = resp.content.decode()
    assert 'id="risk-before-after"' in html  # the record-level table stays
    rows = rows_of(html)
    data = list(csv.DictReader(io.StringIO(LONG_CSV)))
    before: dict[str, set] = {}
    for r in data:
        before.setdefault(r["patient"], set()).add((r["age"], r["sex"]))
    stored = storage.read_frame(storage.output_path(job.result))
    after: dict[str, set] = {}
    keep_suppressed = job.result.report["publishing"]["suppressed_published"]
    for age, sex, row, sup in zip(stored["age"], stored["sex"], stored[results.ROW_COLUMN],
                                  stored[results.SUPPRESSED_COLUMN]):
        if sup and not keep_suppressed:
            continue
        after.setdefault(data[row]["patient"], set()).add((age, sex))
    b, a = figures(before), figures(after)
    assert rows["Persons"] == (str(b["persons"]), str(a["persons"]))
    assert rows["Highest prosecutor risk per person"] == (pct(b["highest"]), pct(a["highest"]))
    assert rows["Sample uniques per person"] == (str(b["uniques"]), str(a["uniques"]))
    assert rows["Marketer risk per person"] == (pct(b["marketer"]), pct(a["marketer"]))
    assert b["persons"] == 10 and b["highest"] == 1.0


def test_no_block_without_a_person_id(client_alice, user):
    job = finished_job(make_dataset(user, LONG_CSV, "long.csv", roles={**ROLES, "patient": Role.INSENSITIVE}), k=2)
    html = client_alice.get(f"/jobs/{job.pk}/result/risk/").content.decode()
    assert 'id="risk-per-person"' not in html
