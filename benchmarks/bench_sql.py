#!/usr/bin/env python3
"""SQL sources and destinations and the export formats on Adult (issue 16): times and sizes.

    DATABASE_URL=sqlite:////tmp/bench-sql.sqlite3 MEDIA_ROOT=/tmp/bench-sql-media \\
    .venv/bin/python benchmarks/bench_sql.py [--shared ../shared] [--repeat 3]

A throw-away PostgreSQL database (anon_bench_sql) gets Adult (30,162 rows, age integer) by COPY; then, best of
--repeat: the import into a dataset (services.sql.import_dataset: streamed in chunks, Parquet, types), a
Datafly k=5 run on sex/age/race, the published rows written to a new table in PostgreSQL and in MariaDB
(services.sql.write_table), and every export format (services.exports.export_frame) with its size. Prints one
line per step. Needs PostgreSQL and MariaDB on 127.0.0.1 (users postgres / root, no password).
"""

from __future__ import annotations

from pathlib import Path

from support import best, parser, setup_django


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    setup_django()
    import psycopg
    import pymysql
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from anonymizer_app.engine import Role
    from anonymizer_app.services import exports, jobs, sql
    from tests.sql_helpers import PG_ADMIN, load_adult_pg

    call_command("migrate", verbosity=0)
    user, _ = User.objects.get_or_create(username="bench-sql")
    name = "anon_bench_sql"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    maria = pymysql.connect(host="127.0.0.1", user="root", password="", autocommit=True)
    with maria.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    pg_url, my_url = f"postgresql://postgres@127.0.0.1:5432/{name}", f"mysql://root@127.0.0.1:3306/{name}"
    try:
        load_adult_pg(pg_url, Path(args.shared) / "datasets")
        seconds, dataset = best(args.repeat, lambda: sql.import_dataset(user, pg_url, table="adult", web=False))
        print(f"import PostgreSQL table adult -> dataset: {dataset.n_rows:,} rows x {dataset.n_columns} columns, "
              f"{seconds:.2f} s (best of {args.repeat})")
        for column in dataset.columns.all():
            column.role = {"id": Role.IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "age": Role.QUASI_IDENTIFYING,
                           "race": Role.QUASI_IDENTIFYING}.get(column.name, Role.INSENSITIVE).value
            column.save()
        job = jobs.run_job(jobs.create_job(dataset, "datafly", 5, 0.02, ""))
        frame = exports.result_frame(job.result)
        kinds = exports.column_kinds(frame, exports.job_column_types(job))
        print(f"published: {len(frame):,} rows; numeric columns: "
              f"{', '.join(c for c, k in kinds.items() if k != 'text') or 'none'}")
        for label, url in (("PostgreSQL", pg_url), ("MariaDB", my_url)):
            seconds, written = best(args.repeat, lambda url=url: sql.write_table(frame, url, "adult_k5", kinds,
                                                                                   replace=True, web=False))
            print(f"write table adult_k5 to {label}: {written:,} rows, {seconds:.2f} s (best of {args.repeat})")
        for fmt in exports.EXPORT_FORMATS:
            seconds, body = best(args.repeat, lambda fmt=fmt: exports.export_frame(frame, fmt, exports.job_column_types(job)))
            print(f"export {fmt:8s}: {len(body) / 1024:8.1f} KiB, {seconds:.2f} s (best of {args.repeat})")
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        with maria.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        maria.close()


if __name__ == "__main__":
    main()
