"""`manage.py anonymize` without Django's app registry until a code path needs it.

The engine's CLI reads and writes files: most runs never touch a model. Populating the registry (every app's
models, Django's ORM, forms, templates and HTTP modules) is about 0.13 s of the 0.8 s whole process of an Adult
run, paid before the first row is read. For the commands in :data:`DEFERRED`, manage.py configures the settings'
logging and runs the command at once; the registry is populated, by the same ``django.setup`` as always, the
moment anything imports a ``models`` module (the only way to reach a model) or asks the registry for an app or
a model (``get_user_model``, ``apps.get_model``). The command's own imports reach no model
(tests/test_cli_deferred_setup.py holds them to that).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import logging
import logging.config
import sys
from collections.abc import Callable
from types import ModuleType

# the commands run this way: their module and every module it imports at the top reach no model
DEFERRED = {"anonymize": "anonymizer_app.management.commands.anonymize"}


def _models_modules(installed_apps: list[str]) -> set[str]:
    """The models modules of the installed apps (an entry is an app's package or its AppConfig's dotted path).
    Other modules named models (django.forms.models, ...) are not an app's: they import as usual."""
    packages = {entry.split(".apps.")[0] if ".apps." in entry else entry for entry in installed_apps}
    return {f"{package}.models" for package in packages}


class _Loaded(importlib.abc.Loader):
    """Hands the import system the module the registry's population has just imported, as it is."""

    def __init__(self, module: ModuleType, spec):
        self.module = module
        self.spec = spec  # the module's own

    def create_module(self, spec):
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec  # executed already, by the population: only its own spec put back


class _SetupOnModels(importlib.abc.MetaPathFinder):
    """The first import of a models module sets Django up first (which imports every app's models), then hands
    that module over: it is never executed twice."""

    def __init__(self, setup: Callable[[], None], models: set[str]):
        self.setup = setup
        self.models = models

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.models and fullname.rpartition(".")[0] not in self.models:
            return None
        self.setup()
        module = sys.modules.get(fullname)
        own = getattr(module, "__spec__", None)
        if module is None or own is None:
            return None  # not an installed app's models: imported as usual, the registry now ready
        # The import system answers a finder's spec for a module that appeared in sys.modules meanwhile with
        # that module's __spec__, and loads it again from there (its models would be defined twice): the module
        # carries a spec whose loader hands it over as it is, until that loader puts the module's own back.
        handover = importlib.util.spec_from_loader(fullname, _Loaded(module, own), origin=own.origin)
        module.__spec__ = handover
        return handover


_CHECKS = ("check_apps_ready", "check_models_ready")  # the registry's questions call one of these first


def install(setup: Callable[[], None]) -> Callable[[], None]:
    """Defers ``setup`` (django.setup) to the first import of a models module or the first question to the app
    registry; returns the function that runs it (once)."""
    from django.apps import apps

    def run() -> None:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for name in _CHECKS:
            apps.__dict__.pop(name, None)  # the class's checks again
        if not apps.ready and not apps.loading:
            setup()

    def setting_up(check: Callable[[], None]) -> Callable[[], None]:
        def checked() -> None:
            # get_user_model(), apps.get_model(), ... before any model was imported: set up, then check as always
            if not apps.loading:
                run()
            check()

        return checked

    from django.conf import settings

    finder = _SetupOnModels(run, _models_modules(list(settings.INSTALLED_APPS)))
    sys.meta_path.insert(0, finder)
    for name in _CHECKS:
        setattr(apps, name, setting_up(getattr(apps, name)))
    return run


def configure_logging() -> None:
    """What django.setup() configures besides the registry that a command's output depends on: the settings'
    LOGGING (and warnings through it), as Django's configure_logging applies it."""
    from django.conf import settings

    logging.captureWarnings(True)
    if settings.LOGGING_CONFIG and settings.LOGGING:
        logging.config.dictConfig(settings.LOGGING)


def run(argv: list[str], setup: Callable[[], None], imported: Callable[[], None] = lambda: None) -> None:
    """``manage.py NAME ...`` for a command of :data:`DEFERRED`: --settings and --pythonpath applied as Django's
    ManagementUtility applies them, the logging configured, the command run with the registry deferred.
    ``imported`` is called once the command's module is imported, before it runs."""
    from django.core.management.base import CommandParser, handle_default_options

    parser = CommandParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--settings")
    parser.add_argument("--pythonpath")
    try:
        options, _ = parser.parse_known_args(argv[2:])
        handle_default_options(options)
    except Exception:  # noqa: BLE001 - the command's own parser reports bad options
        pass
    configure_logging()
    install(setup)
    command = importlib.import_module(DEFERRED[argv[1]]).Command()
    imported()
    command.run_from_argv(argv)
