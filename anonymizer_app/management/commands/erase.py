"""manage.py erase dataset|job|hierarchy|user|orphans ...: delete objects with every file behind them and
print what was removed (services.erasure)."""

from __future__ import annotations

import uuid

from django.contrib.auth import get_user_model

from anonymizer_app.management.base import RUN_FAILED, OneLineCommand, UserError
from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import erasure, storage
from hierarchy_editor.models import Hierarchy

KINDS = ("dataset", "job", "hierarchy", "user", "orphans")


class Command(OneLineCommand):
    """Bad arguments: one line `erase: error: ...` and exit status 2, before anything is deleted."""

    prog = "erase"
    help = ("Delete datasets (with their jobs and results), jobs (of any kind and state: running ones are "
            "cancelled), hierarchies, or whole users with everything they own, and every file behind them; or "
            "remove the media files that belong to no object (orphans). Prints what was removed.")

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=KINDS, help="what to delete")
        parser.add_argument("ids", nargs="*", metavar="ID",
                            help="dataset or hierarchy ids, job ids (UUIDs), or usernames; none for orphans")
        parser.add_argument("--dry-run", action="store_true", help="only print what would be removed")
        parser.add_argument("--grace", type=float, default=None, metavar="SECONDS",
                            help="orphans: only files older than this (default ANONYMIZER_ORPHAN_GRACE_SECONDS)")

    def handle(self, *args, kind, ids, dry_run, grace, **options):
        if kind == "orphans":
            if ids:
                raise UserError("erase orphans takes no ids")
            self._orphans(grace, dry_run)
            return
        if not ids:
            raise UserError(f"erase {kind}: give at least one {'username' if kind == 'user' else 'id'}")
        targets = [self._find(kind, key) for key in dict.fromkeys(ids)]  # all found before anything is deleted
        for target, owner in targets:
            self._report(getattr(erasure, f"erase_{kind}")(target, dry_run=dry_run), owner, dry_run)

    def _find(self, kind: str, key: str):
        if kind == "user":
            user = get_user_model().objects.filter(username=key).first()
            if user is None:
                raise UserError(f"no user named {key!r}")
            return user, None
        pk = key
        if kind == "job":
            try:
                pk = str(uuid.UUID(key))
            except ValueError:
                raise UserError(f"{key!r} is not a job id (a UUID such as {uuid.UUID(int=0)})") from None
        elif not key.isdigit():
            raise UserError(f"{key!r} is not a {kind} id (a number)")
        models: dict[str, type[Dataset | Job | Hierarchy]] = {"dataset": Dataset, "job": Job, "hierarchy": Hierarchy}
        target = models[kind].objects.select_related("owner").filter(pk=pk).first()
        if target is None:
            raise UserError(f"no {kind} with id {pk}")
        return target, target.owner.get_username()

    def _report(self, done: erasure.Erasure, owner: str | None, dry_run: bool) -> None:
        of = f" of user {owner!r}" if owner else ""
        self.stdout.write(f"{'Would delete' if dry_run else 'Deleted'} {done.what}{of}: {done.summary()}")
        for note in done.notes:
            self.stdout.write(f"  {note}")
        for name in done.files:
            self.stdout.write(f"  {'would remove' if dry_run else 'removed'} {name}")
        left = [] if dry_run else storage.existing_files(done.files)
        if left:
            raise UserError(f"{len(left)} file(s) could not be removed: {', '.join(left)}", RUN_FAILED)

    def _orphans(self, grace: float | None, dry_run: bool) -> None:
        names = erasure.sweep_orphans(grace, dry_run=dry_run)
        for name in names:
            self.stdout.write(f"{'would remove' if dry_run else 'removed'} {name}")
        self.stdout.write(f"{len(names)} orphan file{'' if len(names) == 1 else 's'}"
                          f"{' found' if dry_run else ' removed'}")
