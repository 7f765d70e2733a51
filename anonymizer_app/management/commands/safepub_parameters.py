"""manage.py safepub_parameters: SafePub's derived parameters for given ε and δ, without running anything.

    python manage.py safepub_parameters --epsilon 0.5 1 2 3 --delta 1e-6 [--search-share 0.1] [--json]

One line per (ε, δ): ε_anon, ε_search, the sampling probability β and the smallest class size k
(engine.safepub.parameters.derive, docs/definitions.md "SafePub"). Exit status: 0 done, 2 bad values
(one line on stderr, `safepub_parameters: error: ...`).
"""

from __future__ import annotations

import json

from anonymizer_app import engine
from anonymizer_app.engine.safepub.parameters import DEFAULT_SEARCH_SHARE, derive
from anonymizer_app.management.base import OneLineCommand, UserError

PROG = "safepub_parameters"


class ParametersError(UserError):
    """One line on stderr, exit status 2."""


class Command(OneLineCommand):
    prog = PROG
    error_class = ParametersError
    help = ("Print SafePub's derived parameters (ε_anon, ε_search, sampling probability β, smallest class size k) "
            "for every given ε and δ.")

    def add_arguments(self, parser):
        parser.add_argument("--epsilon", nargs="+", type=float, required=True, metavar="E",
                            help="one or more ε (0.01..10)")
        parser.add_argument("--delta", nargs="+", type=float, default=[1e-6], metavar="D",
                            help="one or more δ (1e-10..0.1; default 1e-6)")
        parser.add_argument("--search-share", type=float, default=DEFAULT_SEARCH_SHARE, metavar="S",
                            help=f"share of ε spent by the search (0.01..0.9; default {DEFAULT_SEARCH_SHARE})")
        parser.add_argument("--json", action="store_true", help="one JSON list instead of a table")

    def handle(self, *args, **opts):
        rows = []
        for epsilon in opts["epsilon"]:
            for delta in opts["delta"]:
                try:
                    rows.append(derive(epsilon, delta, opts["search_share"]).to_dict())
                except engine.InputError as exc:
                    raise ParametersError(str(exc)) from None
        if opts["json"]:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        self.stdout.write(f"{'ε':>6} {'δ':>8} {'ε_anon':>8} {'ε_search':>8} {'β':>8} {'k':>8}")
        for r in rows:
            self.stdout.write(f"{r['epsilon']:>6g} {r['delta']:>8.0e} {r['epsilon_anon']:>8.4g} "
                              f"{r['epsilon_search']:>8.4g} {r['beta']:>8.4f} {r['k']:>8d}")
