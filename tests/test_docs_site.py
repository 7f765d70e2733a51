"""The documentation site (mkdocs.yml, docs/): the generated reference pages are in step with the code, the
site builds strictly (no broken link, no page left out of the navigation), and the README stays a short
entry point with exactly the two set-up commands of a fresh machine."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import require_service

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
REGENERATE = ".venv/bin/python docs/generate.py"
README_MAX_BYTES = 12 * 1024
SET_UP_COMMANDS = ["make run", "make test"]


def _generator():
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _require_mkdocs() -> None:
    require_service("MkDocs with the Material theme (the 'docs' extra)",
                    lambda: (importlib.import_module("mkdocs"), importlib.import_module("material")),
                    "pip install -e '.[docs]' (make test installs it)")


# --- generated pages ------------------------------------------------------------------------------------------

def test_the_committed_generated_pages_are_those_the_code_gives(tmp_path):
    """docs/reference/ is generated from the parsers, the registries and the OpenAPI schema: regenerated into
    a temporary folder, every page must equal the committed one."""
    generator = _generator()
    done = subprocess.run([sys.executable, str(DOCS / "generate.py"), "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    drifted = [rel for rel in generator.PAGES
               if not (DOCS / rel).exists()
               or (tmp_path / rel).read_text(encoding="utf-8") != (DOCS / rel).read_text(encoding="utf-8")]
    assert not drifted, (f"generated pages drifted from the code: {', '.join(drifted)}; "
                         f"run `{REGENERATE}` and commit docs/reference/")


def test_every_registered_algorithm_and_privacy_model_is_documented():
    from anonymizer_app.engine.algorithms import ALGORITHMS
    from anonymizer_app.engine.privacy import PRIVACY_MODELS

    page = (DOCS / "reference" / "algorithms.md").read_text(encoding="utf-8")
    missing = ([f"algorithm {n}" for n in ALGORITHMS if f"{{#algorithm-{n}}}" not in page]
               + [f"privacy model {n}" for n in PRIVACY_MODELS if f"{{#model-{n}}}" not in page])
    assert not missing, f"not in docs/reference/algorithms.md: {', '.join(missing)}; run `{REGENERATE}`"
    for name, info in ALGORITHMS.items():
        for option in info.options:
            assert f"`{option.flag}`" in page, f"{name}'s {option.flag}"
    for name, model in PRIVACY_MODELS.items():
        for parameter in model.parameters:
            assert f"`{parameter.flag}`" in page, f"{name}'s {parameter.flag}"


def _project_commands() -> list[tuple[str, str]]:
    from django.core.management import get_commands

    apps = ("anonymizer_app", "hierarchy_editor", "policies", "accounts")
    return sorted((app, name) for name, app in get_commands().items() if app in apps)


def test_every_management_command_and_flag_is_in_the_cli_reference():
    from django.core.management import load_command_class

    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    for flag in _generator()._common_options().values():  # Django's own, listed once
        assert flag in page
    for app, name in _project_commands():
        assert f"## {name} {{#" in page, f"manage.py {name} is not in docs/reference/cli.md; run `{REGENERATE}`"
        parser = load_command_class(app, name).create_parser("manage.py", name)
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and action.help != argparse.SUPPRESS:
                    assert flag in page, f"manage.py {name} {flag}: not in docs/reference/cli.md"


def test_every_management_commands_help_prints():
    """`manage.py COMMAND --help` formats (a stray % in a help text made build_hierarchy's fail)."""
    from django.core.management import load_command_class

    for app, name in _project_commands():
        parser = load_command_class(app, name).create_parser("manage.py", name)
        assert parser.format_help().startswith("usage: manage.py " + name)


# --- the site -----------------------------------------------------------------------------------------------

def test_the_site_builds_strictly(tmp_path):
    """mkdocs build --strict: a broken link or anchor, or a page under docs/ missing from the nav, fails."""
    _require_mkdocs()
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "cli.html").exists()  # pages open from the file system


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert pages
    missing = [p for p in pages if not re.search(rf":\s+{re.escape(p)}\s*$", nav, re.M)]
    assert not missing, f"not in mkdocs.yml's nav: {missing}"


# --- the README -----------------------------------------------------------------------------------------------

def _set_up_commands(text: str) -> list[str]:
    """The commands of the README's "Set up" section: its shell code blocks, comments and blank lines left out."""
    section = re.search(r"^## Set up\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, "README.md has no '## Set up' section"
    commands = []
    for block in re.findall(r"```(?:sh|bash|shell)?\n(.*?)```", section.group(1), re.S):
        for line in block.splitlines():
            command = line.split("#", 1)[0].strip()
            if command:
                commands.append(command)
    return commands


def test_the_readme_is_short_and_sets_up_with_two_commands():
    text = README.read_text(encoding="utf-8")
    size = len(text.encode("utf-8"))
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes (at most {README_MAX_BYTES}): move text to docs/"
    assert _set_up_commands(text) == SET_UP_COMMANDS
    # the same commands anywhere else in the README would be a second, drifting set-up
    assert len(re.findall(r"^\s*make (?:run|test)\b", text, re.M)) == 2
    # their wording stays true: both are Makefile targets, and CI runs `make test`
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("run", "test"):
        assert re.search(rf"^{target}:", makefile, re.M), f"the Makefile has no '{target}' target"
    assert re.search(r"^make test\b", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)


def test_the_readme_links_into_the_docs_site():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert any(t.startswith("docs/") for t in local)
    broken = [t for t in local if not (ROOT / t).exists()]
    assert not broken, f"README.md links to missing files: {broken}"
    assert "docs/screenshot.png" in local
    assert "## Data and attribution" in text and "CC BY 4.0" in text


def test_the_app_still_serves_the_definitions_page_from_docs():
    """docs/definitions.md is a page of the site and the app's /definitions/ page (views/definitions.py)."""
    from anonymizer_app.views import definitions

    assert Path(definitions.DEFINITIONS).resolve() == (DOCS / "definitions.md").resolve()
    assert definitions.DEFINITIONS.exists()
