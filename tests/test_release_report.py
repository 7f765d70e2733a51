"""The release report of a run: the page and its PDF (WeasyPrint), owner-only, escaped, with the figures
the run's report holds and the readings of services.explain."""

import io

import pytest
from anonymizer_helpers import make_dataset, set_roles
from pypdf import PdfReader

from anonymizer_app.engine import Role
from anonymizer_app.models import Job
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db

L2 = {"model": "distinct-l-diversity", "l": 2, "column": "disease"}


def run(ds, k=2, suppression=0.25, models=(L2,)):
    return jobs.run_job(jobs.create_job(ds, "datafly", k, suppression, "disease", {}, list(models)))


def pdf_text(content: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)


def test_the_page_holds_every_part(client_alice, user):
    ds = make_dataset(user, name="Clinic 2024")
    job = run(ds)
    report = job.result.report
    r = client_alice.get(f"/jobs/{job.pk}/result/release-report/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "<h1>Clinic 2024: Datafly, k=2</h1>" in html
    # roles: every column, the identifying one removed
    assert '<tr><th scope="row">name</th><td>string</td><td>identifying</td>\n            <td>removed</td></tr>' in html
    assert '<tr><th scope="row">age</th><td>integer</td><td>quasi-identifying</td>' in html
    # hierarchies: the default one per QI and the level applied
    assert "default for an integer column, built from the data" in html
    assert report["transformation_labels"]["age"] in html
    # models and their parameters; the checks on the published rows
    assert "k = 2 (reached: " in html
    assert '<tr><th scope="row">distinct l-diversity</th>\n            <td>l = 2 · on disease</td></tr>' in html
    assert "✓ Verified." in html and "was read back and every privacy model was checked again" in html
    # before/after with a reading and a cue: the highest risk is 1 / the smallest class (100% before: uniques)
    after = 1 / report["k_achieved"]
    assert f'{after * 100:.3g}%' in html and "100%" in html
    assert 'id="figure-prosecutor_risk_highest"' in html and 'class="cue cue-poor">poor</span>' in html
    assert 'id="figure-ncp"' in html and "of its detail" in html
    # charts drawn on the server
    assert html.count("<svg") == 3 and "Re-identification risk before and after" in html
    # suppressed records and the configuration
    suppressed = report["suppressed"]
    assert f"{suppressed} of 8 records ({suppressed / 8 * 100:.3g}%) were suppressed" in html
    settings = html.split('id="report-settings"')[1].split("</table>")[0]
    assert '<tr><th scope="row">Algorithm</th><td>Datafly (datafly)</td></tr>' in settings
    assert '<tr><th scope="row">k</th><td>2</td></tr>' in settings
    assert '<tr><th scope="row">Privacy models beside k</th><td>distinct l-diversity (l=2) on disease</td></tr>' in settings
    assert f'href="/jobs/{job.pk}/result/release-report.pdf"' in html


def test_the_pdf_reads_as_the_page(client_alice, user):
    ds = make_dataset(user, name="Clinic 2024")
    job = run(ds)
    r = client_alice.get(f"/jobs/{job.pk}/result/release-report.pdf")
    assert r.status_code == 200 and r["Content-Type"] == "application/pdf"
    assert 'filename="small-datafly-k2-release-report.pdf"' in r["Content-Disposition"]
    assert r.content.startswith(b"%PDF-")
    text = pdf_text(r.content)
    for part in ("RELEASE REPORT", "Clinic 2024: Datafly, k=2", "Verified.", "1. Dataset", "distinct l-diversity",
                 "Re-identification risk, before and after", "7. Suppressed records",
                 f"{job.result.report['suppressed']} of 8 records", "8. Configuration to repeat the run",
                 "Algorithm Datafly (datafly)", "Equivalence classes by size", "Distinct values per quasi-identifier"):
        assert part in text, part
    assert "Download as PDF" not in text  # the page's navigation is left out


def test_it_is_owner_only(client_alice, user, other_user):
    job = run(make_dataset(other_user))
    assert client_alice.get(f"/jobs/{job.pk}/result/release-report/").status_code == 404
    assert client_alice.get(f"/jobs/{job.pk}/result/release-report.pdf").status_code == 404


def test_a_job_without_a_result_has_no_report(client_alice, user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.25, "disease")
    assert client_alice.get(f"/jobs/{job.pk}/result/release-report/").status_code == 404
    Job.objects.filter(pk=job.pk).update(status=Job.FAILED)
    assert client_alice.get(f"/jobs/{job.pk}/result/release-report.pdf").status_code == 404


def test_names_and_values_are_escaped_in_the_page_the_charts_and_the_pdf(client_alice, user):
    text = "id,<b>zone</b>,disease\n" + "".join(f"{i},<i>z{i % 2}</i>,{'flu' if i % 3 else 'cold'}\n" for i in range(12))
    ds = make_dataset(user, text=text, name="<script>alert(1)</script>", roles={})
    set_roles(ds, {"id": Role.IDENTIFYING, "<b>zone</b>": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE})
    job = run(ds, k=2, suppression=0.0)
    html = client_alice.get(f"/jobs/{job.pk}/result/release-report/").content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>zone</b>" not in html and "<i>z" not in html
    assert "&lt;b&gt;zone&lt;/b&gt;" in html  # in the tables and the SVG's category labels
    text = pdf_text(client_alice.get(f"/jobs/{job.pk}/result/release-report.pdf").content)
    assert "<script>alert(1)</script>" in text  # shown as text


@pytest.mark.parametrize("algorithm, options, models", [
    ("mondrian", {}, [L2]),
    ("anatomy", {}, [L2]),
    ("kmember", {}, []),
    ("flash", {"keep_lattice": "yes"}, []),
])
def test_every_kind_of_result_has_a_report(client_alice, user, algorithm, options, models):
    ds = make_dataset(user)
    job = jobs.run_job(jobs.create_job(ds, algorithm, 2, 0.25, "disease", options, models))
    assert job.status == Job.SUCCEEDED, job.message
    r = client_alice.get(f"/jobs/{job.pk}/result/release-report/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "✓ Verified." in html and 'id="report-configuration"' in html
    assert '"lattice"' not in html  # a kept lattice is not part of the report


def test_a_set_valued_result_has_no_table_report(client_alice, user):
    from setvalued_helpers import item_hierarchy, transaction_dataset

    from anonymizer_app.services import setvalued

    job = jobs.run_job(setvalued.create_set_job(transaction_dataset(user), "apriori", 2, 2, True, item_hierarchy(user)))
    assert client_alice.get(f"/jobs/{job.pk}/result/release-report/").status_code == 404


def test_the_command_line_repeats_the_run(client_alice, user, tmp_path):
    """The report's command line, given the dataset's file, writes the rows the web app published."""
    import shlex

    from anonymizer_helpers import SMALL_CSV
    from django.core.management import call_command

    ds = make_dataset(user, name="Clinic 2024")
    job = jobs.run_job(jobs.create_job(ds, "flash", 2, 0.25, "disease", {"metric": "ncp"}, [L2]))
    html = client_alice.get(f"/jobs/{job.pk}/result/release-report/").content.decode()
    command = html.split('<pre class="configuration" id="report-command">')[1].split("</pre>")[0]
    command = command.replace("&quot;", '"').replace("&#x27;", "'")
    assert command == ("manage.py anonymize small.csv --identifier name --qi age --qi zip --qi sex --sensitive disease "
                       "--algorithm flash --k 2 --suppression 0.25 --metric ncp --l-variant distinct --l 2 "
                       "--model-column disease --out anonymized.csv --report report.json")
    (tmp_path / "small.csv").write_text(SMALL_CSV, encoding="utf-8")
    args = shlex.split(command)[2:]
    args[0] = str(tmp_path / "small.csv")
    args[args.index("anonymized.csv")] = str(tmp_path / "out.csv")
    args[args.index("report.json")] = str(tmp_path / "report.json")
    call_command("anonymize", *args, "--quiet")
    web = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv").content.decode()
    assert (tmp_path / "out.csv").read_text(encoding="utf-8") == web


def test_without_pango_the_pdf_says_what_to_install(client_alice, user, monkeypatch):
    """WeasyPrint raises OSError on import when Pango is missing: a 503 naming the fix, never a 500."""
    import builtins

    real_import = builtins.__import__

    def no_pango(name, *args, **kwargs):
        if name.startswith("weasyprint"):
            raise OSError("cannot load library 'libpango-1.0-0'")
        return real_import(name, *args, **kwargs)

    job = run(make_dataset(user))
    monkeypatch.setattr(builtins, "__import__", no_pango)
    r = client_alice.get(f"/jobs/{job.pk}/result/release-report.pdf")
    assert r.status_code == 503 and r["Content-Type"].startswith("text/plain")
    assert b"libpango" in r.content and b"print the HTML report" in r.content
