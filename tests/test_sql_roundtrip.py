"""A PostgreSQL table holding Adult goes import -> anonymize -> export to a new table in PostgreSQL and in
MariaDB; the exported tables hold exactly the published rows (numbers typed where every value is one)."""

from __future__ import annotations

import pytest

from anonymizer_app.engine import Role
from anonymizer_app.services import exports, jobs, results, sql
from tests import sql_helpers
from tests.anonymizer_helpers import set_roles
from tests.sql_helpers import load_adult_pg, mariadb_rows, pg_rows

pg_url, mariadb_url = sql_helpers.pg_url, sql_helpers.mariadb_url  # the fixtures

pytestmark = pytest.mark.django_db


def published(job) -> list[tuple]:
    frame, suppressed = results.load_output(job.result)
    frame.attrs.pop("rows", None)
    return frame, [tuple(r) for r in frame.itertuples(index=False)]


def as_text(rows) -> list[tuple]:
    return [tuple("" if v is None else str(v) for v in r) for r in rows]


@pytest.fixture
def adult_job(pg_url, demo_datasets, user):
    header, rows = load_adult_pg(pg_url, demo_datasets)
    progress = []
    dataset = sql.import_dataset(user, pg_url, table="adult", web=False, progress=progress.append)
    assert (dataset.n_rows, dataset.n_columns) == (30162, 10) and progress == [20000, 30162]
    assert dataset.sql_source == {"url": pg_url.replace("postgresql://", "postgresql+psycopg://"), "table": "adult"}
    types = {c.name: c.type for c in dataset.columns.all()}
    assert types["age"] == "integer" and types["id"] == "integer" and types["sex"] == "string"
    set_roles(dataset, {"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING,
                        "race": Role.QUASI_IDENTIFYING, "salary-class": Role.SENSITIVE})
    job = jobs.run_job(jobs.create_job(dataset, "datafly", 5, 0.02, ""))
    assert job.status == job.SUCCEEDED, job.message
    return job


def test_adult_from_postgresql_to_postgresql_and_mariadb(adult_job, pg_url, mariadb_url):
    frame, rows = published(adult_job)
    kinds = exports.column_kinds(frame, exports.job_column_types(adult_job))
    assert "id" not in frame.columns and 29000 < len(rows) <= 30162
    for url, read in ((pg_url, pg_rows), (mariadb_url, mariadb_rows)):
        written = sql.write_table(frame, url, "adult_k5", kinds, web=False)
        assert written == len(rows)
        names, stored = read(url, "SELECT * FROM adult_k5")
        assert names == list(frame.columns)
        assert sorted(as_text(stored)) == sorted(rows)  # the published rows, every one, nothing else
        names_of_tables = read(url, "SELECT table_name FROM information_schema.tables WHERE table_name LIKE "
                                    "'adult_k5%%'")[1]
        assert [t[0] for t in names_of_tables] == ["adult_k5"]  # the temporary table was renamed, none left


def test_export_types_columns_where_the_values_allow(pg_url, mariadb_url, user):
    import pandas as pd

    frame = pd.DataFrame({"age": ["34", "52", "71"], "band": ["[30, 40[", "52", "*"], "score": ["1.5", "2.25", "-3.0"],
                          "note": ["'=cmd", "ok", "é"]})
    kinds = exports.column_kinds(frame, {"age": "integer", "band": "integer", "score": "decimal", "note": "string"})
    sql.write_table(frame, pg_url, "typed", kinds, web=False)
    types = dict(pg_rows(pg_url, "SELECT column_name, data_type FROM information_schema.columns "
                                 "WHERE table_name = 'typed'")[1])
    assert types == {"age": "bigint", "band": "text", "score": "double precision", "note": "text"}
    assert pg_rows(pg_url, "SELECT * FROM typed ORDER BY age")[1] == [
        (34, "[30, 40[", 1.5, "'=cmd"), (52, "52", 2.25, "ok"), (71, "*", -3.0, "é")]
    sql.write_table(frame, mariadb_url, "typed", kinds, web=False)
    types = dict(mariadb_rows(mariadb_url, "SELECT column_name, data_type FROM information_schema.columns "
                                           f"WHERE table_schema = '{mariadb_url.rsplit('/', 1)[1]}'")[1])
    assert types == {"age": "bigint", "band": "mediumtext", "score": "double", "note": "mediumtext"}


def test_an_existing_table_is_refused_unless_replaced(pg_url, mariadb_url):
    import pandas as pd

    first, second = pd.DataFrame({"a": ["1", "2"]}), pd.DataFrame({"a": ["x"], "b": ["y"]})
    for url, read in ((pg_url, pg_rows), (mariadb_url, mariadb_rows)):
        sql.write_table(first, url, "released", {"a": "integer"}, web=False)
        with pytest.raises(sql.SqlError, match="the table 'released' already exists"):
            sql.write_table(second, url, "released", {}, web=False)
        assert read(url, "SELECT a FROM released ORDER BY a")[1] in ([(1,), (2,)], ((1,), (2,)))  # untouched
        sql.write_table(second, url, "released", {}, replace=True, web=False)
        assert list(read(url, "SELECT * FROM released")[1]) == [("x", "y")]
        left = read(url, "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'released%%'")[1]
        assert [t[0] for t in left] == ["released"]  # no temporary or set-aside table remains


def test_a_failed_write_leaves_no_table(pg_url, monkeypatch):
    import pandas as pd

    frame = pd.DataFrame({"a": ["1", "2", "3"]})
    monkeypatch.setattr(sql, "INSERT_ROWS", 1)
    calls = []

    def fail_second(n):
        calls.append(n)
        if n == 2:
            raise sql.SqlError("stopped half-way")

    with pytest.raises(sql.SqlError, match="stopped half-way"):
        sql.write_table(frame, pg_url, "half", {"a": "integer"}, web=False, progress=fail_second)
    assert calls == [1, 2]
    assert pg_rows(pg_url, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")[1] == [(0,)]
