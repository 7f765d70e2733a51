"""`manage.py anonymize` runs before Django's app registry is populated (management/deferred_setup.py), and
populates it, once and as django.setup() always does, the moment a code path reaches a model. Each case runs in
a fresh interpreter: the registry of the test process is populated already."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run_command

REPO = Path(__file__).resolve().parent.parent


def _python(code: str, tmp_path: Path, timeout: int = 300) -> dict:
    """Runs ``code`` in a fresh interpreter at the checkout's root; it leaves a JSON object in REPORT."""
    report = tmp_path / "report.json"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "anonymizer_app.settings", "REPORT": str(report)}
    env.pop("DATABASE_URL", None)
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(report.read_text())


def _csv(path: Path) -> None:
    rows = ["age;sex;zip;disease"]
    for i in range(80):
        rows.append(f"{20 + i % 30};{'MF'[i % 2]};{47600 + i % 7};{('flu', 'cold', 'asthma')[i % 3]}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


ARGS = ["--qi", "age", "--qi", "sex", "--qi", "zip", "--sensitive", "disease", "--algorithm", "flash", "--k", "3",
        "--suppression", "0.04", "--quiet"]


def test_the_command_module_reaches_no_model(tmp_path):
    """The command's module, and everything it imports at its top, imports no models module: otherwise every
    run would populate the registry (and the deferral would buy nothing)."""
    code = """
import importlib.abc, json, os, sys, traceback
from django.conf import settings
seen = []
apps_models = {(a.split(".apps.")[0] if ".apps." in a else a) + ".models" for a in settings.INSTALLED_APPS}
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in apps_models:
            seen.append(name + " <- " + " <- ".join(f"{f.filename}:{f.lineno}" for f in traceback.extract_stack()[-8:-1]))
            raise ImportError(name)
sys.meta_path.insert(0, Refuse())
import anonymizer_app.management.commands.anonymize
from django.apps import apps
json.dump({"seen": seen, "ready": apps.ready}, open(os.environ["REPORT"], "w"))
"""
    report = _python(code, tmp_path)
    assert report == {"seen": [], "ready": False}


def test_a_file_run_never_populates_the_registry_and_writes_what_call_command_writes(tmp_path):
    data, out = tmp_path / "people.csv", tmp_path / "deferred.csv"
    _csv(data)
    argv = ["manage.py", "anonymize", str(data), *ARGS, "--out", str(out)]
    code = f"""
import json, os, runpy, sys
sys.argv = {argv!r}
try:
    runpy.run_path("manage.py", run_name="__main__")
except SystemExit as exc:
    assert not exc.code, exc.code
from django.apps import apps
json.dump({{"ready": apps.ready, "models": sorted(m for m in sys.modules if m.endswith(".models")
                                                  and not m.startswith("django.db"))}}, open(os.environ["REPORT"], "w"))
"""
    report = _python(code, tmp_path)
    assert report == {"ready": False, "models": []}
    # the same run in this (set up) process: byte for byte the same file
    status, text, _ = run_command("anonymize", data, *ARGS, "--out", tmp_path / "in_process.csv")
    assert status == 0, text
    assert out.read_bytes() == (tmp_path / "in_process.csv").read_bytes()


def test_a_path_that_imports_a_model_populates_the_registry_once_first(tmp_path):
    """--sql-url imports services.sql, which imports the models: the registry is populated then, by
    django.setup(), and the models module is executed once (a second execution would register its models again)."""
    db = tmp_path / "d.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (zip text, sex text)")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [("10115", "F"), ("10117", "F"), ("10119", "M"),
                                                         ("10120", "M")])
    out = tmp_path / "o.csv"
    argv = ["manage.py", "anonymize", "--sql-url", f"sqlite:///{db}", "--sql-table", "t", "--qi", "sex", "--k", "2",
            "--algorithm", "datafly", "--out", str(out), "--quiet"]
    code = f"""
import json, os, runpy, sys, django
calls = []
setup = django.setup
def counted(*args, **kwargs):
    calls.append(1)
    setup(*args, **kwargs)
django.setup = counted
sys.argv = {argv!r}
try:
    runpy.run_path("manage.py", run_name="__main__")
except SystemExit as exc:
    assert not exc.code, exc.code
from django.apps import apps
import anonymizer_app.models as m
json.dump({{"ready": apps.ready, "setups": len(calls), "origin": m.__spec__.origin,
           "job": m.Job._meta.app_label}}, open(os.environ["REPORT"], "w"))
"""
    report = _python(code, tmp_path)
    assert report["ready"] is True and report["setups"] == 1 and report["job"] == "anonymizer_app"
    assert report["origin"].endswith(str(Path("anonymizer_app") / "models.py"))
    assert out.read_text().splitlines() == ["zip,sex", "10115,F", "10117,F", "10119,M", "10120,M"]


@pytest.mark.parametrize("reach", [
    "from hierarchy_editor.models import Hierarchy as Model",
    "from django.contrib.auth import get_user_model; Model = get_user_model()",
    "from django.apps import apps as registry; Model = registry.get_model('anonymizer_app', 'Dataset')",
])
def test_every_way_to_a_model_populates_the_registry_first(tmp_path, reach):
    code = f"""
import json, os, sys, warnings
warnings.simplefilter("error")  # a model registered twice warns ("Model ... was already registered")
import django
from anonymizer_app.management import deferred_setup
deferred_setup.configure_logging()
deferred_setup.install(django.setup)
from django.apps import apps
before = apps.ready
{reach}
import anonymizer_app.models, hierarchy_editor.models, accounts.models
json.dump({{"before": before, "ready": apps.ready, "model": Model._meta.label,
           "models": len(apps.get_models())}}, open(os.environ["REPORT"], "w"))
"""
    report = _python(code, tmp_path)
    assert report["before"] is False and report["ready"] is True
    assert report["model"] in ("hierarchy_editor.Hierarchy", "auth.User", "anonymizer_app.Dataset")
    from django.apps import apps

    assert report["models"] == len(apps.get_models())  # every model of the set-up test process, each once


def test_bad_flags_still_fail_in_one_line(tmp_path):
    data = tmp_path / "people.csv"
    _csv(data)
    proc = subprocess.run([sys.executable, "manage.py", "anonymize", str(data), "--k", "zero"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.startswith("anonymize: error:") and "Traceback" not in proc.stderr
