"""The engine is a plain Python library: importing it loads neither Django nor Celery.

Run in a fresh interpreter, since this test process has Django (pytest-django) loaded already. The
static side of the same contract (no engine module imports django, celery, kombu or the web apps)
is checked by import-linter (`lint-imports`, [tool.importlinter] in pyproject.toml).
"""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHECK = """
import sys
import anonymizer_app.engine
import anonymizer_app.engine.run.stages, anonymizer_app.engine.run.pipeline, anonymizer_app.engine.algorithms
forbidden = ("django", "celery", "kombu", "hierarchy_editor", "accounts")
loaded = sorted(m for m in sys.modules if m.split(".")[0] in forbidden)
outside = sorted(m for m in sys.modules if m.startswith("anonymizer_app.") and not
                 (m == "anonymizer_app.engine" or m.startswith("anonymizer_app.engine.")))
print("\\n".join(loaded + outside))
sys.exit(1 if loaded or outside else 0)
"""


def test_importing_the_engine_loads_neither_django_nor_celery():
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}  # no DJANGO_SETTINGS_MODULE, no REDIS_URL
    proc = subprocess.run([sys.executable, "-c", CHECK], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"importing the engine loaded:\n{proc.stdout}{proc.stderr}"
