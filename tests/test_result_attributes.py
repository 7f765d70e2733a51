"""The result page's per-attribute table (issue 30): one row per QI with its level, ARX's Loss, NCP, height and
the shares published as '*' and suppressed, the '*' and suppressed shares recounted from the published rows."""

import re

import pytest
from anonymizer_helpers import people_dataset

from anonymizer_app.engine.measure.figure_catalogue import ATTRIBUTE_FIGURES, format_figure
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
        # each figure as the catalogue formats it (the API and the release report show the same texts)
        cells = "".join(f'<td class="num">{format_figure(key, a[source])}</td>' for key, source in ATTRIBUTE_FIGURES)
        assert f'<th scope="row">{qi}</th>{cells}</tr>' in table
    # the run's Loss is ARX's geometric mean of the per-QI values
    product = 1.0
    for a in rows.values():
        product *= (1 + a["loss"]) ** (1 / len(rows))
    assert report["metrics"]["loss"] == pytest.approx(product - 1)
    assert ">Weight</th>" not in table  # an unweighted run: no weight column


def test_a_weighted_run_shows_each_quasi_identifiers_weight(client_alice, user):
    job = jobs.run_job(jobs.create_job(people_dataset(user, hierarchies=False), "flash", 3, 0.05, "disease",
                                       {"metric": "loss", "weights": "age=1,zip_code=0.2"}))
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    start = html.index('id="attribute-figures"')
    table = re.sub(r">\s+<", "><", html[start:html.index("</table>", start)])
    weight = {"age": "1", "zip_code": "0.2", "city_birth": "0.5"}
    for a in job.result.report["attributes"]:
        cells = "".join(f'<td class="num">{format_figure(key, a[source])}</td>' for key, source in ATTRIBUTE_FIGURES)
        assert f'<th scope="row">{a["qi"]}</th><td class="num">{weight[a["qi"]]}</td>{cells}</tr>' in table
