"""`manage.py anonymize` with SQL databases and the other output formats: Adult read from a PostgreSQL
table (--sql-url/--sql-table) gives the same published rows as from the CSV file; --out by extension
(.tsv, .parquet, .xlsx, .jsonl) reads back equal to the .csv run; --out-sql writes the same rows to a new
table in PostgreSQL and MariaDB; bad flags and a refused table write leave nothing; import_sql."""

from __future__ import annotations

import csv
import io
import json

import openpyxl
import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from anonymizer_app.services import exports
from tests import sql_helpers
from tests.cli_helpers import run_command
from tests.sql_helpers import load_adult_pg, mariadb_rows, pg_rows

pg_url, mariadb_url = sql_helpers.pg_url, sql_helpers.mariadb_url  # the fixtures
QI = ["sex", "age", "race"]


def call(*args) -> tuple[int, str, str]:
    return run_command("anonymize", *args)


def flags(adult) -> list[str]:
    args = []
    for col in QI:
        args += ["--qi", col, "--hierarchy", f"{col}={adult / f'adult_hierarchy_{col}.csv'}"]
    return [*args, "--sensitive", "salary-class", "--algorithm", "datafly", "--k", "5", "--suppression", "0.02"]


def read_csv(path, delimiter=",") -> pd.DataFrame:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter=delimiter))
    return pd.DataFrame(rows[1:], columns=rows[0])


@pytest.fixture
def adult(demo_datasets):
    return demo_datasets / "adult"


def test_every_out_format_reads_back_equal_to_the_csv(adult, tmp_path):
    code, text, _ = call(adult / "adult.csv", *flags(adult), "--out", tmp_path / "a.csv", "--quiet")
    assert code == 0, text
    reference = read_csv(tmp_path / "a.csv", ";")  # the input's delimiter
    assert len(reference) > 29000 and list(reference.columns)[:3] == ["sex", "age", "race"]
    for ext in ("tsv", "parquet", "xlsx", "jsonl"):
        code, text, _ = call(adult / "adult.csv", *flags(adult), "--out", tmp_path / f"a.{ext}", "--quiet")
        assert code == 0, text
    assert read_csv(tmp_path / "a.tsv", "\t").equals(reference)
    parquet = pd.read_parquet(tmp_path / "a.parquet")
    assert parquet.astype(str).map(exports.neutralize).equals(reference)
    lines = (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()
    assert pd.DataFrame([json.loads(x) for x in lines]).astype(str).map(exports.neutralize).equals(reference)
    sheet = openpyxl.load_workbook(tmp_path / "a.xlsx", read_only=True).active
    rows = [[str(v) for v in r] for r in sheet.iter_rows(values_only=True)]
    assert pd.DataFrame(rows[1:], columns=rows[0]).equals(reference)


def test_adult_from_postgresql_to_postgresql_and_mariadb(adult, tmp_path, pg_url, mariadb_url):
    load_adult_pg(pg_url, adult.parent)
    code, text, _ = call(adult / "adult.csv", *flags(adult), "--out", tmp_path / "file.csv", "--quiet")
    assert code == 0, text
    reference = read_csv(tmp_path / "file.csv", ";")
    code, text, err = call("--sql-url", pg_url, "--sql-table", "adult", "--identifier", "id", *flags(adult),
                           "--out", tmp_path / "db.csv", "--out-sql", pg_url, "--out-table", "adult_k5")
    assert code == 0, text
    assert "reading postgresql+psycopg://postgres@127.0.0.1:5432/" in err and "30,162 rows" in err  # progress
    assert text.strip().endswith(f"; table adult_k5 at {pg_url.replace('postgresql://', 'postgresql+psycopg://')}")
    from_db = read_csv(tmp_path / "db.csv")  # comma-delimited; a table has no row order: compared as sets
    assert list(from_db.columns) == list(reference.columns)
    assert sorted(from_db.itertuples(index=False)) == sorted(reference.itertuples(index=False))
    names, stored = pg_rows(pg_url, "SELECT * FROM adult_k5")
    assert names == list(reference.columns)
    rows = sorted(tuple(str(v) for v in r) for r in stored)
    assert rows == sorted(tuple(r) for r in reference.itertuples(index=False))
    # --out-sql alone (no file) into MariaDB, the source a query
    code, text, _ = call("--sql-url", pg_url, "--sql-query", 'SELECT sex, age, race, "salary-class" FROM adult',
                         *flags(adult), "--out-sql", mariadb_url, "--out-table", "adult_k5", "--quiet")
    assert code == 0, text
    names, stored = mariadb_rows(mariadb_url, "SELECT * FROM adult_k5")
    assert names == ["sex", "age", "race", "salary-class"]
    assert sorted(tuple(str(v) for v in r) for r in stored) == sorted(
        tuple(r) for r in reference[names].itertuples(index=False))
    # the table exists now: refused (exit 2), nothing written, the old table untouched
    code, text, _ = call("--sql-url", pg_url, "--sql-table", "adult", "--identifier", "id", *flags(adult),
                         "--out", tmp_path / "again.csv", "--out-sql", pg_url, "--out-table", "adult_k5", "--quiet")
    assert code == 2 and "--out-table adult_k5: the table already exists at postgresql+psycopg://" in text
    assert not (tmp_path / "again.csv").exists()
    code, text, _ = call("--sql-url", pg_url, "--sql-table", "adult", "--identifier", "id", *flags(adult),
                         "--out-sql", pg_url, "--out-table", "adult_k5", "--out-replace", "--quiet")
    assert code == 0, text


@pytest.mark.parametrize("args,message", [
    (["--sql-table", "t", "--out", "x.csv"], "--sql-table and --sql-query read from --sql-url URL"),
    (["--sql-url", "postgresql://u@h/d", "--out", "x.csv"], "give --sql-table T or --sql-query Q"),
    (["--sql-url", "postgresql://u@h/d", "--sql-table", "t", "--sql-query", "SELECT 1", "--out", "x.csv"],
     "give --sql-table T or --sql-query Q"),
    (["--out", "x.csv"], "required: INPUT (a table file) or --sql-url URL"),
    (["--sql-url", "postgresql://u@h/d", "--sql-table", "t"], "required: --out (or --out-sql URL --out-table NAME)"),
    (["--sql-url", "postgresql://u@h/d", "--sql-table", "t", "--out-sql", "postgresql://u@h/d"],
     "--out-sql URL and --out-table NAME go together"),
    (["--sql-url", "postgresql://u@h/d", "--sql-table", "t", "--out-sql", "postgresql://u@h/d", "--out-table",
      "1bad"], "a table name is letters, digits and _"),
    (["--sql-url", "oracle://u@h/d", "--sql-table", "t", "--out", "x.csv"], "'oracle' is not supported"),
    (["--sql-url", "postgresql://u@h/d", "--sql-query", "DELETE FROM t", "--out", "x.csv"], "only a SELECT"),
    (["in.csv", "--cluster", "tcp://127.0.0.1:8786", "--out", "x.parquet"], "--cluster writes CSV"),
    (["in.csv", "--transactions", "--out-sql", "sqlite:///x.db", "--out-table", "t"], "--transactions writes a"),
])
def test_bad_flags(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, text, _ = call(*args, "--qi", "a", "--k", "2")
    assert code == 2 and message in text, text
    assert not list(tmp_path.iterdir())


def test_sqlite_in_the_cli(tmp_path):
    import sqlite3

    db = tmp_path / "d.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (zip text, sex text)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [("10115", "F"), ("10117", "F"), ("10119", "M"),
                                                         ("10120", "M")])
    code, text, _ = call("--sql-url", f"sqlite:///{db}", "--sql-table", "t", "--qi", "sex", "--k", "2",
                         "--algorithm", "datafly", "--out", tmp_path / "o.jsonl", "--quiet")
    assert code == 0, text
    lines = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    # zip holds whole numbers only (the run typed it integer): numbers in JSON
    assert lines == [{"zip": 10115, "sex": "F"}, {"zip": 10117, "sex": "F"}, {"zip": 10119, "sex": "M"},
                     {"zip": 10120, "sex": "M"}]


@pytest.mark.django_db
def test_import_sql_command(pg_url, user, demo_datasets):
    load_adult_pg(pg_url, demo_datasets)
    out, err = io.StringIO(), io.StringIO()
    call_command("import_sql", "--user", "alice", "--sql-url", pg_url, "--sql-table", "adult", "--name", "Adult PG",
                 stdout=out, stderr=err)
    from anonymizer_app.models import Dataset

    ds = Dataset.objects.get(owner=user)
    assert (ds.name, ds.n_rows, ds.n_columns) == ("Adult PG", 30162, 10)
    assert f"dataset {ds.pk}" in out.getvalue() and "30,162 rows" in err.getvalue()
    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command("import_sql", "--user", "nobody", "--sql-url", pg_url, "--sql-table", "adult")
    with pytest.raises(CommandError, match="the table 'missing' does not exist"):
        call_command("import_sql", "--user", "alice", "--sql-url", pg_url, "--sql-table", "missing")
    assert Dataset.objects.count() == 1
