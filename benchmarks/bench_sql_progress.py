#!/usr/bin/env python3
"""How soon a long SQL import shows progress, and what counting the table first costs (issue 16 follow-up).

    DATABASE_URL=sqlite:////tmp/bench-sqlp.sqlite3 MEDIA_ROOT=/tmp/bench-sqlp-media \\
    .venv/bin/python benchmarks/bench_sql_progress.py [--shared ../shared] [--copies 10]

A throw-away PostgreSQL database (anon_bench_sql_progress) gets Adult --copies times (30,162 rows each, by
COPY); then services.sql.count_rows (the page's "of how many") and services.sql.stage_import (what the import
page runs beside the request) with a progress callback: the seconds to the first progress line (the first
chunk of 20,000 rows), the number of lines, the total seconds and rows per second. Needs PostgreSQL on
127.0.0.1 (user postgres, no password).
"""

from __future__ import annotations

import time
from pathlib import Path

from support import parser, setup_django


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--copies", type=int, default=10)
    args = ap.parse_args()
    setup_django()
    import psycopg
    from django.core.management import call_command

    from anonymizer_app.services import sql
    from tests.sql_helpers import PG_ADMIN, load_adult_pg

    call_command("migrate", verbosity=0)
    name = "anon_bench_sql_progress"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    url = f"postgresql://postgres@127.0.0.1:5432/{name}"
    try:
        header, _ = load_adult_pg(url, Path(args.shared) / "datasets")
        names = ", ".join(f'"{h}"' for h in header)
        with psycopg.connect(url, autocommit=True) as conn:
            for _ in range(args.copies - 1):
                conn.execute(f"INSERT INTO adult ({names}) SELECT {names} FROM adult ORDER BY id LIMIT 30162")
        start = time.perf_counter()
        total = sql.count_rows(url, "adult", web=False)
        print(f"count_rows: {total:,} rows in {time.perf_counter() - start:.3f} s")
        lines: list[tuple[float, int]] = []
        start = time.perf_counter()
        staged = sql.stage_import(url, "adult", web=False,
                                  progress=lambda rows: lines.append((time.perf_counter() - start, rows)))
        seconds = time.perf_counter() - start
        staged.discard()
        print(f"stage_import: {staged.n_rows:,} rows x {len(staged.columns)} columns in {seconds:.2f} s "
              f"({staged.n_rows / seconds:,.0f} rows/s); {len(lines)} progress lines, the first after "
              f"{lines[0][0]:.2f} s ({lines[0][1]:,} rows), the longest gap between two "
              f"{max(b[0] - a[0] for a, b in zip(lines, lines[1:])) if len(lines) > 1 else 0:.2f} s")
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
