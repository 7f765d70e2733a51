#!/usr/bin/env python3
"""Django's command-line utility for administrative tasks."""

import gc
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    # Starting Django creates some 180,000 objects that live as long as the process (numpy, pandas, the app
    # registry, the models): the cyclic garbage collector would walk them again and again, while they are
    # made and in every full collection of the command after (0.1-0.25 s CPU of `manage.py anonymize` on
    # Adult, 0.4 s and more on a million rows). It is off until django.setup() returns; what exists then is
    # frozen (never walked again) and the collector runs as usual on the command's own objects.
    gc.disable()
    import django

    def collect_from_now() -> None:
        gc.freeze()
        gc.enable()

    from anonymizer_app.management import deferred_setup

    # `manage.py anonymize` runs before Django's app registry is populated, which happens the moment it reaches
    # a model (deferred_setup.py)
    if len(sys.argv) > 1 and sys.argv[1] in deferred_setup.DEFERRED:
        try:  # the same freeze once the command's modules are imported; a later setup adds to the heap as is
            deferred_setup.run(sys.argv, django.setup, imported=collect_from_now)
        finally:
            gc.enable()
        return

    from django.core.management import execute_from_command_line

    setup = django.setup

    def setup_then_collect(*args, **kwargs):
        try:
            setup(*args, **kwargs)
        finally:
            collect_from_now()

    django.setup = setup_then_collect  # called by execute_from_command_line once the settings are known
    try:
        execute_from_command_line(sys.argv)
    finally:
        gc.enable()  # a command that never set Django up (e.g. `manage.py help`, `version`)


if __name__ == "__main__":
    main()
