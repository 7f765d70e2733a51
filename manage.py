#!/usr/bin/env python3
"""Django's command-line utility for administrative tasks."""

import gc
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    # Starting Django creates hundreds of thousands of objects that live as long as the process (numpy,
    # pandas, the app registry, the models): the cyclic garbage collector would walk them again and again
    # while they are made (about 70 ms of a 1 s `manage.py anonymize`). It is off until django.setup()
    # returns; what exists then is frozen (never walked again) and the collector runs as usual for the
    # command itself.
    gc.disable()
    import django
    from django.core.management import execute_from_command_line

    setup = django.setup

    def setup_then_collect(*args, **kwargs):
        try:
            setup(*args, **kwargs)
        finally:
            gc.freeze()
            gc.enable()

    django.setup = setup_then_collect  # called by execute_from_command_line once the settings are known
    try:
        execute_from_command_line(sys.argv)
    finally:
        gc.enable()  # a command that never set Django up (e.g. `manage.py help`, `version`)


if __name__ == "__main__":
    main()
