"""manage.py anonymize --pseudonymize/--mask/--surrogate/--reidentification-table: exact pseudonyms against an
independent HMAC, masks and surrogates exact, the table's file mode, bad flags in one
line with exit status 2 and nothing written."""

from __future__ import annotations

import csv
import hashlib
import hmac
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from tests.cli_helpers import run_command

REPO = Path(__file__).resolve().parent.parent
KEY = bytes(range(32))
CSV = "name,age,zip\nAnn Lee,34,10115\nBob Roy,36,10117\nann lee,35,10119\n,52,20095\nEve Fox,55,20097\nBob Roy,58,20099\n"
NAMES = ["Ann Lee", "Bob Roy", "ann lee", "", "Eve Fox", "Bob Roy"]


def _hmac(value: str, key: bytes = KEY, n: int = 16) -> str:
    return hmac.new(key, value.encode(), hashlib.sha256).hexdigest()[:n]


def call(*args) -> tuple[int, str, str]:
    return run_command("anonymize", *args)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "in.csv").write_text(CSV)
    (tmp_path / "key.hex").write_text(KEY.hex() + "\n")
    return tmp_path


def _rows(path: Path) -> list[dict]:
    return list(csv.DictReader(path.open()))


def test_pseudonyms_equal_an_independent_hmac_and_the_table_is_private(files):
    out, table = files / "out.csv", files / "reid.csv"
    key = files / "table.key"
    code, text, err = call(files / "in.csv", "--qi", "age", "--qi", "zip", "--k", "2", "--pseudonymize", "name",
                           "--pseudonym-key-file", files / "key.hex", "--reidentification-table", table,
                           "--reidentification-key-file", key, "--out", out, "--quiet")
    assert code == 0, text
    assert [r["name"] for r in _rows(out)] == [_hmac(v) if v else "" for v in NAMES]
    assert list(_rows(out)[0]) == ["name", "age", "zip"]
    assert stat.S_IMODE(os.stat(table).st_mode) == stat.S_IMODE(os.stat(key).st_mode) == 0o600
    stored = table.read_bytes()
    assert not any(n.encode() in stored for n in NAMES if n) and _hmac("Ann Lee").encode() not in stored
    assert Fernet(key.read_bytes().strip()).decrypt(stored).decode().splitlines() == [
        "column,original,pseudonym", f"name,Ann Lee,{_hmac('Ann Lee')}", f"name,Bob Roy,{_hmac('Bob Roy')}",
        f"name,Eve Fox,{_hmac('Eve Fox')}", f"name,ann lee,{_hmac('ann lee')}"]
    assert "encrypted under" in err
    assert KEY.hex() not in out.read_text()
    code, text, _ = run_command("reidentification_table", table, "--key-file", key, "--out", files / "plain.csv")
    assert code == 0, text
    assert (files / "plain.csv").read_text().splitlines()[1] == f"name,Ann Lee,{_hmac('Ann Lee')}"
    (files / "other.key").write_bytes(Fernet.generate_key())
    code, text, _ = run_command("reidentification_table", table, "--key-file", files / "other.key")
    assert code == 2 and "not a re-identification table encrypted under" in text


def test_fold_case_length_and_the_environment_key(files, monkeypatch):
    monkeypatch.setenv("ANONYMIZER_PSEUDONYM_KEY", KEY.hex())
    out = files / "out.csv"
    code, text, _ = call(files / "in.csv", "--qi", "age", "--k", "2", "--pseudonymize", "name",
                         "--pseudonym-fold-case", "--token-length", "64", "--out", out, "--quiet")
    assert code == 0, text
    cells = [r["name"] for r in _rows(out)]
    assert cells[0] == cells[2] == hmac.new(KEY, b"ann lee", hashlib.sha256).hexdigest()


def test_masks_and_surrogates(files):
    out = files / "out.csv"
    code, text, _ = call(files / "in.csv", "--qi", "age", "--k", "2", "--mask", "name=prefix:1,suffix:1,char:#",
                         "--surrogate", "zip", "--out", out, "--quiet", "--reidentification-table", files / "t.csv",
                         "--reidentification-key-file", files / "t.key")
    assert code == 0, text
    rows = _rows(out)
    assert [r["name"] for r in rows] == ["A#####e", "B#####y", "a#####e", "", "E#####x", "B#####y"]
    zips = [r["zip"] for r in rows]
    assert len(set(zips)) == 6 and not set(zips) & {"10115", "10117", "10119", "20095", "20097", "20099"}
    plain = Fernet(files.joinpath("t.key").read_bytes().strip()).decrypt(files.joinpath("t.csv").read_bytes())
    table = {r["original"]: r["pseudonym"] for r in csv.DictReader(plain.decode().splitlines())}
    assert [table[z] for z in ("10115", "10117", "10119", "20095", "20097", "20099")] == zips
    code, text, _ = call(files / "in.csv", "--qi", "age", "--k", "2", "--mask", r"name=regex:[a-z]", "--out", out,
                         "--quiet")
    assert code == 0, text
    assert [r["name"] for r in _rows(out)][:2] == ["A** L**", "B** R**"]


@pytest.mark.parametrize("args, message", [
    (["--pseudonymize", "name"], "--pseudonymize needs a key"),
    (["--pseudonymize", "name", "--pseudonym-key-file", "KEYFILE", "--token-length", "4"], "token length must be"),
    (["--mask", "name"], "--mask name: give COL=prefix"),
    (["--mask", "name=prefix:x"], "prefix must be a whole number"),
    (["--mask", "name=middle:2"], "unknown part"),
    (["--mask", "name=regex:("], "bad regex"),
    (["--surrogate", "age"], "--qi age: the column is also"),
    (["--surrogate", "nope"], "nope"),
    (["--reidentification-table", "t.csv"], "applies to --pseudonymize"),
    (["--mask", "name=prefix:1", "--reidentification-table", "t.csv"], "only pseudonyms and surrogates"),
    (["--surrogate", "name", "--reidentification-table", "t.csv"], "go together"),
    (["--surrogate", "name", "--reidentification-key-file", "t.key"], "go together"),
    (["--surrogate", "name", "--reidentification-table", "t.csv", "--reidentification-key-file", "KEYFILE"],
     "not a Fernet key"),
])
def test_bad_flags_one_line_exit_2_nothing_written(files, monkeypatch, args, message):
    monkeypatch.delenv("ANONYMIZER_PSEUDONYM_KEY", raising=False)
    args = [str(files / "key.hex") if a == "KEYFILE" else a for a in args]
    out = files / "out.csv"
    code, text, _ = call(files / "in.csv", "--qi", "age", "--k", "2", *args, "--out", out, "--quiet")
    assert code == 2 and message in text and "\n" not in text.strip()
    assert not out.exists() and not (files / "t.csv").exists()


def test_a_short_or_bad_key_is_refused(files):
    (files / "short.hex").write_text("abcd")
    (files / "bad.hex").write_text("xyz")
    for name, message in (("short.hex", "at least 16 bytes"), ("bad.hex", "hexadecimal")):
        code, text, _ = call(files / "in.csv", "--qi", "age", "--k", "2", "--pseudonymize", "name",
                             "--pseudonym-key-file", files / name, "--out", files / "o.csv", "--quiet")
        assert code == 2 and message in text


def test_the_command_line_exit_status(files):
    r = subprocess.run([sys.executable, "manage.py", "anonymize", str(files / "in.csv"), "--qi", "age", "--k", "2",
                        "--mask", "name=oops", "--out", str(files / "o.csv")], cwd=REPO, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and "--mask name=oops" in r.stderr and len(r.stderr.strip().splitlines()) == 1
