"""Flags shared by import_remote and deposit: where the repository is and which token to use."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from anonymizer_app.engine import EngineError
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
    from anonymizer_app.services import remote  # requests (0.2 s) is imported by the runs that use it only
    from anonymizer_app.services.vault import VaultError  # and the vault's cryptography (20 ms)

    if opts.get("account"):
        # the models are imported here only: `manage.py anonymize` runs without Django's app registry until a
        # path needs it (management/deferred_setup.py)
        from anonymizer_app.models import RemoteAccount

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


# ---- manage.py anonymize: a repository file as INPUT, the published rows deposited as a draft ----------------
def add_anonymize_arguments(parser) -> None:
    group = parser.add_argument_group(
        "Zenodo and Dataverse (tokens: $ZENODO_TOKEN / $DATAVERSE_TOKEN or --zenodo-token-file / "
        "--dataverse-token-file; servers allow-listed by ANONYMIZER_REMOTE_HOSTS)")
    group.add_argument("--from-zenodo", default=None, metavar="ID",
                       help="read the table from this Zenodo record (number, DOI or page) instead of INPUT")
    group.add_argument("--from-dataverse", default=None, metavar="ID",
                       help="read the table from this Dataverse dataset (doi:...) or file id instead of INPUT")
    group.add_argument("--remote-file", default=None, metavar="NAME",
                       help="the record's file (default: its one CSV/TSV/Excel file)")
    group.add_argument("--deposit", default=None, choices=["zenodo", "dataverse"],
                       help="after the run, deposit OUT (and --report) as a new draft (never published)")
    group.add_argument("--deposit-title", default=None, metavar="T", help="default: '<OUT name>, anonymized'")
    group.add_argument("--deposit-description", default=None, metavar="D",
                       help="default: the algorithm and k")
    group.add_argument("--deposit-creator", action="append", default=[], metavar="'FAMILY, GIVEN'",
                       help="a creator of the draft (repeat; at least one with --deposit)")
    group.add_argument("--deposit-contact-email", default="", metavar="EMAIL", help="Dataverse: required")
    group.add_argument("--deposit-dataverse", default="", metavar="ALIAS", help="Dataverse: the collection")
    for service, default in (("zenodo", "https://zenodo.org"), ("dataverse", "https://demo.dataverse.org")):
        group.add_argument(f"--{service}-url", default=None, metavar="URL", help=f"default: {default}")
        group.add_argument(f"--{service}-token-file", default=None, metavar="FILE",
                           help=f"a file holding the {service.capitalize()} API token")


def _anonymize_client(service: str, opts: dict):
    return connection(service, {"base_url": opts[f"{service}_url"], "token_file": opts[f"{service}_token_file"]}, None)


def _check_anonymize_flags(error, opts: dict) -> None:
    if opts["from_zenodo"] and opts["from_dataverse"]:
        raise error("--from-zenodo and --from-dataverse: give one of them")
    remote_input = opts["from_zenodo"] or opts["from_dataverse"]
    if remote_input and (opts["input"] or opts.get("sql_url")):
        raise error(f"--from-{'zenodo' if opts['from_zenodo'] else 'dataverse'} replaces INPUT (and --sql-url): "
                    "give one source")
    if opts["remote_file"] and not remote_input:
        raise error("--remote-file applies to --from-zenodo or --from-dataverse")
    deposit_flags = (opts["deposit_title"], opts["deposit_description"], opts["deposit_creator"],
                     opts["deposit_contact_email"], opts["deposit_dataverse"])
    if opts["deposit"] is None:
        if any(deposit_flags):
            raise error("--deposit-... flags apply to --deposit zenodo|dataverse")
        return
    if opts["out"] is None:
        raise error("--deposit sends OUT: give --out FILE")
    if not opts["deposit_creator"]:
        raise error("--deposit needs at least one --deposit-creator 'Family, Given'")
    if opts["deposit"] == "dataverse" and not (opts["deposit_dataverse"] and opts["deposit_contact_email"]):
        raise error("--deposit dataverse needs --deposit-dataverse ALIAS and --deposit-contact-email EMAIL")


@contextmanager
def anonymize_remote(command, opts: dict, progress) -> Iterator[None]:
    """Check the flags; download a --from-zenodo/--from-dataverse file (the upload's size limit) into a private
    temporary folder as INPUT; after a successful run, deposit OUT (and --report) as a draft. A failed deposit
    leaves no draft (OUT stays: it is this run's published table)."""
    error = command.error_class
    _check_anonymize_flags(error, opts)
    if opts["deposit"] or opts["from_zenodo"] or opts["from_dataverse"]:
        from anonymizer_app.services import remote  # requests is imported by the runs that use it only
    deposit_client = _anonymize_client(opts["deposit"], opts) if opts["deposit"] else None
    if deposit_client is not None and not deposit_client.has_token:
        raise error(f"--deposit {opts['deposit']}: no token (${TOKEN_ENV[opts['deposit']]} or "
                    f"--{opts['deposit']}-token-file)")
    service = "zenodo" if opts["from_zenodo"] else "dataverse" if opts["from_dataverse"] else None
    folder = Path(tempfile.mkdtemp(prefix="anonymize-remote-"))  # 0700: the rows are personal data
    try:
        if service is not None:
            identifier = opts["from_zenodo"] or opts["from_dataverse"]
            try:
                client = _anonymize_client(service, opts)
                files = remote.list_files(service, client, identifier)
                chosen = remote.choose_file(files, opts["remote_file"], f"{remote.SERVICES[service]} {identifier}")
                if not chosen.is_table:
                    raise remote.RemoteError(f"{chosen.name}: not a table file")
                name = Path(chosen.name).name
                if Path(name).suffix.lower() == ".tab":
                    name = Path(name).stem + ".tsv"
                path = folder / name
                limit = settings.ANONYMIZER_MAX_UPLOAD_MB * 1024 * 1024
                with open(path, "wb") as fh:
                    client.download(chosen.url, chosen.name, fh, limit, progress=lambda n: progress(
                        0.0, f"downloading {chosen.name} from {client.label}: {n / 1048576:.1f} MB"))
                # a SAS file's value labels: the format catalog of the same record, packed with it
                remote.attach_catalog(client, remote.sas_catalog(files, chosen), path, chosen.name)
                progress.close()
            except EngineError as exc:
                raise error(str(exc)) from None
            opts["input"] = str(path)
        yield
        if deposit_client is not None:
            out = Path(opts["out"])
            deposited = [(out.name, out.read_bytes())]
            if opts.get("report"):
                deposited.append((Path(opts["report"]).name, Path(opts["report"]).read_bytes()))
            meta = remote.DepositMetadata(
                title=opts["deposit_title"] or f"{out.stem}, anonymized",
                description=opts["deposit_description"] or f"{out.name}: anonymized with {opts.get('algorithm')} "
                                                           f"(k={opts.get('k')})",
                creators=opts["deposit_creator"], contact_email=opts["deposit_contact_email"])
            try:
                draft = remote.deposit(opts["deposit"], deposit_client, deposited, meta, opts["deposit_dataverse"])
            except EngineError as exc:
                raise error(f"--deposit: {exc} (OUT was written: {out})") from None
            command.stderr.write(f"draft {draft.identifier} on {deposit_client.label} (not published): {draft.url}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
