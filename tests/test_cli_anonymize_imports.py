"""`manage.py anonymize` imports what its run needs (issue 32: the whole process against ARX's, where importing
networkx for the synthesizers' registry, the vault's cryptography or phonenumbers for a table without phone-like
values was a tenth of a run on Adult): a k-anonymity run on a small CSV, its modules listed once it ended."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# libraries a plain table run does not use: each loads only with the flag or the step that needs it
HEAVY = ("networkx", "scipy", "sklearn", "jax", "jaxlib", "mbi", "opendp", "dask", "distributed", "plotly",
         "weasyprint", "matplotlib", "celery", "kombu", "phonenumbers", "cryptography", "sqlalchemy", "openpyxl")

RUN = """
import json, runpy, sys
sys.argv = {argv!r}
try:
    runpy.run_path("manage.py", run_name="__main__")
finally:
    with open({listing!r}, "w") as fh:
        json.dump(sorted({{m.split(".")[0] for m in sys.modules}}), fh)
"""


def _csv(path: Path) -> None:
    rows = ["age;sex;zip;disease"]
    for i in range(60):
        rows.append(f"{20 + i % 30};{'MF'[i % 2]};{47600 + i % 7};{('flu', 'cold', 'asthma')[i % 3]}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_a_table_run_imports_none_of_the_heavy_libraries(tmp_path):
    data, out, listing = tmp_path / "people.csv", tmp_path / "out.csv", tmp_path / "modules.json"
    _csv(data)
    argv = ["manage.py", "anonymize", str(data), "--qi", "age", "--qi", "sex", "--qi", "zip", "--sensitive",
            "disease", "--algorithm", "flash", "--k", "2", "--suppression", "0.04", "--out", str(out), "--quiet"]
    proc = subprocess.run([sys.executable, "-c", RUN.format(argv=argv, listing=str(listing))], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8").splitlines()[0] == "age;sex;zip;disease"
    loaded = set(json.loads(listing.read_text()))
    assert {"pandas", "anonymizer_app"} <= loaded  # the listing is the run's
    assert sorted(loaded & set(HEAVY)) == []
