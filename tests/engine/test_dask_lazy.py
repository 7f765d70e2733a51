"""The engine imports without dask: only a run that asks for a cluster imports dask and distributed."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_engine_and_the_cluster_backend_import_without_dask():
    # the engine without Django; the command line's cluster flags as manage.py loads them, after django.setup()
    code = ("import os, sys; import anonymizer_app.engine.run.pipeline, anonymizer_app.engine.backends.dask.backend, "
            "anonymizer_app.engine.backends.dask.mondrian; "
            "os.environ['DJANGO_SETTINGS_MODULE'] = 'anonymizer_app.settings'; os.environ.setdefault('DEBUG', '1'); "
            "import django; django.setup(); import anonymizer_app.management.cluster_flags; "
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')); "
            "assert not loaded, loaded")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
