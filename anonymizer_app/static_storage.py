"""Where `collectstatic` puts the static files (STATIC_ROOT), readable by everyone.

Static files are public: whitenoise serves them to anyone, and a proxy in front may serve STATIC_ROOT from disk
as another user. The process umask (077, settings.py) and FILE_UPLOAD_PERMISSIONS (0600, meant for uploads),
which Django's storages fall back to, would make them 0600 in 0700 folders. This storage writes files 0644 and
folders 0755, and after each collection makes the whole of STATIC_ROOT so (what an older collection left, and
the STATIC_ROOT folder itself, created by settings.py under the umask). Nothing else is made public.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.contrib.staticfiles.storage import StaticFilesStorage

FILE_MODE = 0o644
DIR_MODE = 0o755


def make_public(root: Path) -> None:
    """Every folder under ``root`` (itself included) 0755, every file 0644; symbolic links (collectstatic
    --link) are left alone: their targets are the project's own files."""
    if not root.is_dir():
        return
    os.chmod(root, DIR_MODE)
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, DIR_MODE)
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, FILE_MODE)


class PublicStaticFilesStorage(StaticFilesStorage):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("file_permissions_mode", FILE_MODE)
        kwargs.setdefault("directory_permissions_mode", DIR_MODE)
        super().__init__(*args, **kwargs)

    def post_process(self, paths, dry_run: bool = False, **options):
        """Called by collectstatic once the files are copied: nothing is renamed, the tree is made public."""
        if not dry_run:
            make_public(Path(self.location))
        yield from ()
