"""Flags shared by import_remote and deposit: where the repository is and which token to use."""

from __future__ import annotations

import os
from pathlib import Path

from anonymizer_app.management.base import UserError

TOKEN_ENV = {"zenodo": "ZENODO_TOKEN", "dataverse": "DATAVERSE_TOKEN"}


def add_connection_flags(parser) -> None:
    parser.add_argument("--base-url", default=None, metavar="URL",
                        help="the repository's root (default: https://zenodo.org or https://demo.dataverse.org); "
                             "an allow-listed host (ANONYMIZER_REMOTE_HOSTS)")
    parser.add_argument("--token-file", default=None, metavar="FILE",
                        help="a file holding the API token (else $ZENODO_TOKEN / $DATAVERSE_TOKEN)")
    parser.add_argument("--account", default=None, metavar="NAME",
                        help="the user's stored connection of this name (its encrypted token and server)")


def connection(service: str, opts: dict, owner):
    """The client for ``service`` from --account, or --base-url and --token-file / the environment."""
    from anonymizer_app.models import RemoteAccount
    from anonymizer_app.services import remote
    from anonymizer_app.services.vault import VaultError

    if opts.get("account"):
        account = RemoteAccount.objects.filter(owner=owner, name=opts["account"]).first()
        if account is None:
            raise UserError(f"--account: {owner.username} has no connection {opts['account']!r}")
        if account.service != service:
            raise UserError(f"--account: {account.name!r} is a {account.get_service_display()} connection")
        try:
            return remote.make_client(service, opts.get("base_url") or account.base_url, account.token())
        except VaultError as exc:
            raise UserError(f"--account: {exc}") from None
    token = None
    if opts.get("token_file"):
        try:
            token = Path(opts["token_file"]).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeError) as exc:
            raise UserError(f"--token-file: cannot read {opts['token_file']}: {exc}") from None
        if not token:
            raise UserError(f"--token-file: {opts['token_file']} is empty")
    else:
        token = os.environ.get(TOKEN_ENV[service], "").strip() or None
    return remote.make_client(service, opts.get("base_url") or remote.DEFAULT_BASE_URLS[service], token)
