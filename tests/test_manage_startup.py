"""manage.py's start: the cyclic GC is off while Django sets up, then on again with the start-up heap frozen, for
every command; and Django's setup loads neither Celery nor kombu (tasks.py loads the Celery app when a job is
queued), while the tasks still bind to the project's Celery app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def shell(code: str) -> str:
    proc = subprocess.run([sys.executable, "manage.py", "shell", "--no-imports", "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_the_collector_runs_for_the_command_and_the_start_up_heap_is_frozen():
    assert shell("import gc; print(gc.isenabled(), gc.get_freeze_count() > 10000)") == "True True"


def test_setup_loads_no_celery_and_the_task_binds_to_the_project_app():
    out = shell("import sys; print(any(m.split('.')[0] in ('celery', 'kombu') for m in sys.modules)); "
                "from anonymizer_app.tasks import run_job_task; from anonymizer_app.celery import app; "
                "print(run_job_task.app is app)")
    assert out.split() == ["False", "True"]


def test_the_anonymize_command_loads_no_scikit_learn_or_jax():
    """The command reads policies, which read the synthesizers' registry: the models' and the DP synthesizers'
    libraries (about a second to import) load only when a set is drawn or a model trained."""
    out = shell("import sys; import anonymizer_app.management.commands.anonymize; "
                "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'jax', 'mbi'}))")
    assert out == "[]"
