"""Databases of the SQL source/destination tests: a PostgreSQL and a MariaDB database of their own per
test (created and dropped here, named after the xdist worker so parallel runs never share one), and the
Adult table loaded into PostgreSQL."""

from __future__ import annotations

import csv
import os
import secrets
from pathlib import Path

import pytest

PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"


def _name(prefix: str) -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw")
    return f"{prefix}_{worker}_{secrets.token_hex(4)}"


@pytest.fixture
def pg_url(postgres_available, settings):
    """A fresh PostgreSQL database; its URL (psycopg 3). Its server is one the web app may name (the tests
    run with DEBUG off, where an empty ANONYMIZER_SQL_ALLOWED_HOSTS refuses every server)."""
    import psycopg

    settings.ANONYMIZER_SQL_ALLOWED_HOSTS = ["127.0.0.1"]

    name = _name("anon_h6_sql")
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def mariadb_url(mariadb_available, settings):
    """A fresh MariaDB database; its URL (PyMySQL); its server allowed as pg_url's."""
    import pymysql

    settings.ANONYMIZER_SQL_ALLOWED_HOSTS = ["127.0.0.1"]

    name = _name("anon_h6_sql")
    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="", autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
        yield f"mysql://root@127.0.0.1:3306/{name}"
    finally:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        conn.close()


def pg_execute(url: str, *statements: str, params=None) -> None:
    import psycopg

    dsn = url.replace("postgresql://", "postgresql://", 1)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for s in statements:
            conn.execute(s, params)


def pg_rows(url: str, query: str) -> tuple[list[str], list[tuple]]:
    import psycopg

    with psycopg.connect(url) as conn:
        cur = conn.execute(query)
        return [d.name for d in cur.description], cur.fetchall()


def mariadb_rows(url: str, query: str) -> tuple[list[str], list[tuple]]:
    import pymysql

    db = url.rsplit("/", 1)[1]
    conn = pymysql.connect(host="127.0.0.1", port=3306, user="root", password="", database=db)
    try:
        with conn.cursor() as cur:
            cur.execute(query)
            return [d[0] for d in cur.description], list(cur.fetchall())
    finally:
        conn.close()


def adult_rows(datasets: Path) -> tuple[list[str], list[list[str]]]:
    with open(datasets / "adult" / "adult.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter=";"))
    return rows[0], rows[1:]


def load_adult_pg(url: str, datasets: Path, table: str = "adult") -> tuple[list[str], list[list[str]]]:
    """Adult into PostgreSQL: age an integer column, the others text (COPY, as a hospital's table would be)."""
    import psycopg

    header, rows = adult_rows(datasets)
    cols = ", ".join(f'"{h}" {"integer" if h == "age" else "text"}' for h in header)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE TABLE "{table}" (id serial PRIMARY KEY, {cols})')
        names = ", ".join(f'"{h}"' for h in header)
        with conn.cursor().copy(f'COPY "{table}" ({names}) FROM STDIN') as copy:
            for row in rows:
                copy.write_row([int(v) if h == "age" else v for h, v in zip(header, row)])
    return header, rows
