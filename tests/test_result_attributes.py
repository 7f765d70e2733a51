"""The result page's per-attribute table (issue 30): one row per QI with its level, ARX's Loss, NCP, height and
the shares published as '*' and suppressed, the '*' and suppressed shares recounted from the published rows."""

import re

import pytest
from anonymizer_helpers import people_dataset

from anonymizer_app.services import jobs, results

pytestmark = pytest.mark.django_db


def test_the_result_page_shows_the_loss_per_quasi_identifier(client_alice, user):
    job = jobs.run_job(jobs.create_job(people_dataset(user, hierarchies=False), "flash", 3, 0.05, "disease",
                                       {"metric": "loss"}))
    report = job.result.report
    rows = {a["qi"]: a for a in report["attributes"]}
    assert list(rows) == report["quasi_identifiers"]
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    start = html.index('id="attribute-figures"')
    table = re.sub(r">\s+<", "><", html[start:html.index("</table>", start)])
    n = report["input_records"]
    suppressed = report["suppressed"]
    frame, _ = results.load_output(job.result)  # the published rows (suppressed ones removed)
    assert len(frame) == n - suppressed
    for qi, a in rows.items():
        assert a["level"] == report["transformation"][qi]
        assert a["suppressed_share"] == pytest.approx(suppressed / n)
        assert a["star_share"] == pytest.approx(sum(str(c) == "*" for c in frame[qi]) / n)
        assert (f'<th scope="row">{qi}</th><td class="num">{a["level"]}</td>'
                f'<td class="num">{a["loss"]:.4f}</td>') in table
    # the run's Loss is ARX's geometric mean of the per-QI values
    product = 1.0
    for a in rows.values():
        product *= (1 + a["loss"]) ** (1 / len(rows))
    assert report["metrics"]["loss"] == pytest.approx(product - 1)
