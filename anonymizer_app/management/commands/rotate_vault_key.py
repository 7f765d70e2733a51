"""manage.py rotate_vault_key: re-encrypt every stored secret under the current vault key (docs/vault.md).

    ANONYMIZER_VAULT_KEY=<new> ANONYMIZER_VAULT_OLD_KEYS=<old> python manage.py rotate_vault_key
    python manage.py rotate_vault_key --check           # read only: what is under which key, what nothing opens
    python manage.py rotate_vault_key --from-secret-key  # also read what earlier versions stored under the key
                                                          # they derived from SECRET_KEY (this process's SECRET_KEY)
    python manage.py rotate_vault_key --derived-key      # print that derived key (for ANONYMIZER_VAULT_OLD_KEYS)

Every kind of stored secret (services/vault_rotation.py) is read with the configured keys and written under
ANONYMIZER_VAULT_KEY, one transaction per table; what is already under it is left alone, so running it twice
changes nothing the second time. The counts go to stdout; a secret no key opens is named by kind and id (never
its content) and makes the exit status 1, the others being rotated all the same. Then the old keys can be
removed from ANONYMIZER_VAULT_OLD_KEYS once ``--check`` reports nothing under them.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from anonymizer_app.services import vault, vault_rotation


class Command(BaseCommand):
    help = ("Re-encrypt every secret the vault stores (pseudonymization keys, re-identification tables, connection "
            "tokens, saved SQL passwords, m-invariance states, DICOM UID keys) under ANONYMIZER_VAULT_KEY; "
            "--check reports without writing.")
    # the command checks the vault's own settings itself; another setting's check must not block a rotation
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true",
                            help="write nothing: count the secrets under the current key and under old keys, and "
                                 "name those no configured key decrypts")
        parser.add_argument("--from-secret-key", action="store_true",
                            help="also decrypt with the key earlier versions derived from SECRET_KEY (the "
                                 "SECRET_KEY of this process's environment)")
        parser.add_argument("--derived-key", action="store_true",
                            help="print the key earlier versions derived from SECRET_KEY and stop (to list it in "
                                 "ANONYMIZER_VAULT_OLD_KEYS while moving off it)")
        parser.add_argument("--state-file", action="append", default=[], type=Path, metavar="FILE",
                            help="also an m-invariance state file of the CLI (anonymize --history FILE); repeatable")

    def handle(self, *args, **opts):
        if opts["derived_key"]:
            self.stdout.write(vault.secret_key_derived_key(settings.SECRET_KEY))
            return
        extra = (vault.secret_key_derived_key(settings.SECRET_KEY),) if opts["from_secret_key"] else ()
        try:
            counts = vault_rotation.rotate_all(check=opts["check"], extra=extra, files=tuple(opts["state_file"]))
        except vault.VaultError as exc:
            raise CommandError(str(exc)) from None
        for count in counts:
            self.stdout.write(self._line(count, opts["check"]))
        total = vault_rotation.Count("total", sum(c.current for c in counts), sum(c.rotated for c in counts),
                                     [name for c in counts for name in c.unreadable])
        self.stdout.write(self._line(total, opts["check"]))
        if total.unreadable:
            raise CommandError(
                f"{len(total.unreadable)} stored secret(s) cannot be decrypted with any configured key: "
                f"{'; '.join(total.unreadable)}. Add the key they were stored under to {vault.OLD_SETTING} (or "
                f"run with --from-secret-key and the SECRET_KEY they were stored under) and run again "
                f"({vault.GUIDE})")

    @staticmethod
    def _line(count, check: bool) -> str:
        if check:
            return (f"{count.kind}: {count.total} stored: {count.current} under the current key, {count.rotated} "
                    f"under an old key, {len(count.unreadable)} not decryptable")
        return (f"{count.kind}: {count.total} stored, {count.rotated} re-encrypted, {count.current} already under "
                f"the current key, {len(count.unreadable)} not decryptable")
