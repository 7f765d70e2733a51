#!/usr/bin/env python3
"""The first run of a new user (issue 14, "Done when"): upload, accept the suggested roles, run with the
run form's defaults untouched, and look at the table.

    .venv/bin/python benchmarks/make_quality_tables.py --out var/quality      # the generated tables
    DATABASE_URL=sqlite:////tmp/bench-first-run.sqlite3 MEDIA_ROOT=/tmp/bench-first-run-media \\
    .venv/bin/python benchmarks/bench_first_run.py [--tables var/quality] [--shared ../shared] \\
        [--set suppression_percent=5] [--json out.json]

Everything goes through the web app's pages (Django's test client): POST the file to the upload page,
read the column page's form as it comes (the suggested types and roles: its selected options), mark the
quasi-identifiers and the obvious sensitive column (the page suggests no quasi-identifier), save; read the run form as it comes (every field
at its initial value; ``--set field=value`` overrides one, to compare other defaults) and POST it; the
job runs at once in this process (jobs.submit_job replaced by jobs.run_job, as the tests do); then GET
the result page. Tables: Adult (/work/shared/datasets/adult/adult.csv, no hierarchies uploaded: the
defaults by type and distribution, as a new user gets them), the hospital admissions and survey tables
of make_quality_tables.py.

Per table: the run form's algorithm, k, suppression limit; NCP; the share of QI cells that read `*`
(services.advice.star_shares averaged over the QIs: suppressed records count as `*`, a QI left with one
value counts as all `*`); records suppressed; equivalence classes; whether the result page shows the
advice box. Use a throw-away database: the script migrates it and adds a user.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The column page suggests no quasi-identifier (only "identifying" for a column unique on every row), so a
# user marks them: the QIs and the sensitive column a user would pick (as bench_quality.py); every other
# column keeps the suggested role and every column the suggested type.
TABLES = {
    "adult": (["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
               "salary-class"], "occupation"),
    "hospital_admissions": (["age", "sex", "postcode", "admission_date", "length_of_stay", "ward"], "diagnosis"),
    "survey": (["age", "education", "household_income", "region", "employment"], "trust_in_government"),
}


class Forms(HTMLParser):
    """Every <form> of a page as a list of (name, value) pairs a browser would submit unchanged."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[dict] = []
        self._select: str | None = None
        self._options: list[tuple[str, bool]] = []
        self._option: dict | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action", ""), "fields": []})
        if not self.forms:
            return
        fields = self.forms[-1]["fields"]
        if tag == "input" and a.get("name") and "disabled" not in a:
            kind = (a.get("type") or "text").lower()
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    fields.append((a["name"], a.get("value", "on")))
            elif kind not in ("submit", "button", "file", "image", "reset"):
                fields.append((a["name"], a.get("value") or ""))
        elif tag == "select" and a.get("name") and "disabled" not in a:
            self._select, self._options = a["name"], []
        elif tag == "option" and self._select is not None:
            self._option = {"value": a.get("value"), "selected": "selected" in a, "text": ""}
            self._options.append(self._option)  # type: ignore[arg-type]
        elif tag == "textarea" and a.get("name"):
            self._textarea = a["name"]
            fields.append((a["name"], ""))

    def handle_data(self, data):
        if self._option is not None:
            self._option["text"] += data
        if self._textarea is not None:
            name, value = self.forms[-1]["fields"][-1]
            self.forms[-1]["fields"][-1] = (name, value + data)

    def handle_endtag(self, tag):
        if tag == "option":
            self._option = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select" and self._select is not None:
            chosen = [o for o in self._options if o["selected"]] or self._options[:1]  # type: ignore[index]
            for o in chosen:
                value = o["value"] if o["value"] is not None else o["text"].strip()  # type: ignore[index]
                self.forms[-1]["fields"].append((self._select, value))
            self._select = None


def form_with(html: str, key: str) -> dict:
    parser = Forms()
    parser.feed(html)
    for form in parser.forms:
        if any(name == key or name.startswith(key) for name, _ in form["fields"]):
            return form
    raise SystemExit(f"no form with a field {key!r} on the page")


def as_data(fields: list[tuple[str, str]]) -> dict:
    data: dict[str, list[str]] = {}
    for name, value in fields:
        data.setdefault(name, []).append(value)
    return data


def first_run(client, user, name: str, path: Path, qis: list[str], sensitive: str, overrides: dict) -> dict:
    from anonymizer_app.models import Dataset, Job
    from anonymizer_app.services import advice

    t0 = time.perf_counter()
    with path.open("rb") as f:
        r = client.post("/datasets/upload/", {"file": f, "header": "auto"})
    assert r.status_code == 302, (name, r.status_code, r.content[:400])
    ds = Dataset.objects.filter(owner=user).latest("pk")
    columns = form_with(client.get(f"/datasets/{ds.pk}/columns/").content.decode(), "role:")
    chosen = {f"role:{q}": "quasi-identifying" for q in qis} | {f"role:{sensitive}": "sensitive"}
    fields = [(k, chosen.get(k, v)) for k, v in columns["fields"]]
    r = client.post(f"/datasets/{ds.pk}/columns/", as_data(fields))
    assert r.status_code == 302, (name, "columns", r.status_code, r.content[:400])
    run = form_with(client.get(f"/datasets/{ds.pk}/run/").content.decode(), "suppression_percent")
    data = as_data(run["fields"])
    for key, value in overrides.items():
        data[key] = [value]
    shown = {key: data.get(key, [""])[0] for key in ("algorithm", "k", "suppression_percent", "sensitive")}
    r = client.post(f"/datasets/{ds.pk}/run/", data)
    if r.status_code != 302:  # the form came back: show its messages
        errors = re.findall(r'class="[^"]*(?:form-errors|field-errors|message-error)[^"]*"[^>]*>(.*?)</(?:ul|div)>',
                            r.content.decode(), re.S)
        shown_errors = [re.sub(r"<[^>]+>|\s+", " ", e).strip() for e in errors]
        raise SystemExit(f"{name}: the run form refused: {shown_errors}")
    job = Job.objects.get(pk=r["Location"].strip("/").split("/")[-1])  # the redirect: /jobs/<id>/
    seconds = time.perf_counter() - t0
    if job.status != Job.SUCCEEDED:
        return {"table": name, **shown, "error": job.message, "seconds": seconds}
    report = job.result.report
    page = client.get(f"/jobs/{job.pk}/result/").content.decode()
    shares = advice.star_shares(report)
    metrics = report.get("metrics", {})
    return {
        "table": name, "records": ds.n_rows, **shown,
        "qis": report.get("quasi_identifiers", []),
        "metric": (report.get("search") or {}).get("metric"),
        "ncp": float(metrics["ncp"]),
        "star_share": sum(shares.values()) / len(shares) if shares else 0.0,
        "star_by_qi": shares,
        "suppressed": int(report.get("suppressed", metrics.get("suppressed", 0)) or 0),
        "classes": int(metrics.get("equivalence_classes", 0)),
        "k_achieved": report.get("k_achieved"),
        "transformation": report.get("transformation_labels") or report.get("transformation"),
        "advice_box": 'id="advice"' in page,
        "seconds": seconds,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", default=str(REPO / "var" / "quality"))
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--only", default=",".join(TABLES), help="tables, separated by commas")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="change one run form field from its initial value (repeatable)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    overrides = dict(item.split("=", 1) for item in args.set)
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from anonymizer_app.services import jobs

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    jobs.submit_job = jobs.run_job  # the views call jobs.submit_job: run the job here, at once
    user, _ = User.objects.get_or_create(username="bench-first-run")
    client = Client()
    client.force_login(user)
    paths = {"adult": Path(args.shared) / "datasets" / "adult" / "adult.csv"}
    rows = []
    for name in args.only.split(","):
        path = paths.get(name, Path(args.tables) / f"{name}.csv")
        out = first_run(client, user, name, path, *TABLES[name], overrides)
        rows.append(out)
        head = (f"{name}: {out['algorithm']} k={out['k']} suppression {out['suppression_percent']}% "
                f"sensitive {out['sensitive'] or '-'}")
        if "error" in out:
            print(f"{head}\n  STOPPED: {out['error']}")
            continue
        print(f"{head}\n  {out['records']} records, QIs {', '.join(out['qis'])}; metric {out['metric']}\n"
              f"  NCP {out['ncp']:.3f}  *-cells {out['star_share']:.1%}  suppressed {out['suppressed']}  "
              f"classes {out['classes']}  k reached {out['k_achieved']}  advice box "
              f"{'yes' if out['advice_box'] else 'no'}  ({out['seconds']:.1f} s)\n"
              f"  * by QI: " + ", ".join(f"{q} {s:.0%}" for q, s in out["star_by_qi"].items()) + "\n"
              f"  transformation: {out['transformation']}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
