#!/usr/bin/env python3
"""Zenodo and Dataverse on Adult (issue 16): import a record's file and deposit a result, against the local
repository server of the tests (tests/remote_helpers.py; no network), times and sizes.

    DATABASE_URL=sqlite:////tmp/bench-remote.sqlite3 MEDIA_ROOT=/tmp/bench-remote-media \\
    .venv/bin/python benchmarks/bench_remote.py [--shared ../shared] [--repeat 3]

Adult (30,162 rows, 9 columns) is served as a Zenodo record's CSV and a Dataverse ingested file (fetched with
?format=original); best of --repeat: the import (list the files, stream the download under the upload limit,
the upload's ingestion), then Datafly k=5 on sex/age/race and the deposit of the published rows as a draft
(CSV; with the release report) on each. Prints one line per step.
"""

from __future__ import annotations

import threading
from pathlib import Path

from support import best, parser, setup_django


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    setup_django()
    from http.server import ThreadingHTTPServer

    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from anonymizer_app.engine import Role
    from anonymizer_app.services import dataverse, jobs, remote, zenodo
    from tests.remote_helpers import DATAVERSE_TOKEN, ZENODO_TOKEN, Repository, make_handler

    adult = (Path(args.shared) / "datasets" / "adult" / "adult.csv").read_bytes()
    repo = Repository()
    repo.zenodo_records["201"] = {"adult.csv": adult}
    repo.dataverse_files[51] = ("adult.tab", "adult.csv", adult)
    repo.dataverse_datasets["doi:10.5072/FK2/ADULT1"] = [51]
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(repo))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host = f"127.0.0.1:{server.server_address[1]}"
    settings.ANONYMIZER_REMOTE_HTTP_HOSTS = [host]
    base = f"http://{host}"
    call_command("migrate", verbosity=0)
    user, _ = User.objects.get_or_create(username="bench-remote")
    try:
        z, dv = zenodo.client(base, ZENODO_TOKEN), dataverse.client(base, DATAVERSE_TOKEN)
        for label, client, service, identifier in (("Zenodo record", z, "zenodo", "10.5281/zenodo.201"),
                                                   ("Dataverse dataset", dv, "dataverse", "doi:10.5072/FK2/ADULT1")):
            def run(client=client, service=service, identifier=identifier):
                chosen = remote.choose_file(remote.list_files(service, client, identifier), None, identifier)
                return remote.import_file(user, client, chosen)
            seconds, dataset = best(args.repeat, run)
            print(f"import {label} adult.csv ({len(adult) / 1048576:.1f} MB) -> dataset: {dataset.n_rows:,} rows x "
                  f"{dataset.n_columns} columns, {seconds:.2f} s (best of {args.repeat})")
        for column in dataset.columns.all():
            column.role = {"sex": Role.QUASI_IDENTIFYING, "age": Role.QUASI_IDENTIFYING,
                           "race": Role.QUASI_IDENTIFYING}.get(column.name, Role.INSENSITIVE).value
            column.save()
        job = jobs.run_job(jobs.create_job(dataset, "datafly", 5, 0.02, ""))
        meta = remote.DepositMetadata("Adult, anonymized", "Datafly k=5", ["Doe, Jane"], "jane@example.org")
        report = remote.release_report_html(job, user.username)
        files = remote.deposit_files(job, "csv", report_html=report)
        sizes = ", ".join(f"{n} {len(b) / 1024:.0f} KiB" for n, b in files)
        for service, client in (("zenodo", z), ("dataverse", dv)):
            seconds, draft = best(args.repeat, lambda service=service, client=client: remote.deposit(
                service, client, files, meta, "anonymized"))
            print(f"deposit draft on {service}: {sizes}; {seconds:.2f} s (best of {args.repeat})")
    finally:
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main()
