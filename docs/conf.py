"""Sphinx configuration for the fitgpp docs (Sphinx + MyST-NB; built by ``make docs``).

Why Sphinx + MyST-NB and not Jupyter Book: see ``index.md``. In short, the
pages are Markdown, the pages with figures are text notebooks executed on
every build (so figures and numbers cannot drift from the code), autodoc and
the CLI reference come from the code, and the whole build runs offline.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # docfigs.py, the small helper the executed pages import

import fitgpp  # noqa: E402  (the installed package; autodoc documents it)

project = "fitgpp"
author = "the fitgpp authors"
copyright = "2026, the fitgpp authors"
release = version = fitgpp.__version__

extensions = [
    "myst_nb",                # Markdown pages; text notebooks executed at build time
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinxarg.ext",          # the CLI reference, from fitgpp.cli.build_parser
]

# Pages other helpers write are part of the site once they exist; these must exist.
exclude_patterns = ["_build", "README.md", "examples", "**.ipynb_checkpoints", "Thumbs.db",
                    ".DS_Store"]
# .ipynb: write-a-policy.ipynb is a link to notebooks/09_write_a_policy.ipynb, so the page is
# that notebook, executed on every build like the text notebooks
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb", ".rst": "restructuredtext"}
root_doc = "index"

# ---------------------------------------------------------------- MyST / MyST-NB
myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
myst_heading_anchors = 3
# Executed pages run every time: cached outputs could show numbers from older code.
nb_execution_mode = "force"
nb_execution_raise_on_error = True   # a failing cell fails the build
nb_execution_show_tb = True
nb_execution_timeout = 600           # a cell of reproduce.md computes one study at the full size
nb_merge_streams = True
nb_output_stderr = "warn"            # anything a page prints to stderr is a warning, so an error
nb_render_markdown_format = "myst"  # Markdown outputs (tables from results.md) as MyST
# Charts are rendered to SVG inside the kernel (vl-convert, offline); never let a
# text/html bundle that loads vega from a CDN win over the SVG.
nb_mime_priority_overrides = [("html", "image/svg+xml", 5)]
nb_ipywidgets_js = {}                # no widget JS from a CDN (the docs embed no widgets)

# ---------------------------------------------------------------- autodoc
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_preserve_defaults = True
napoleon_google_docstring = False
napoleon_numpy_docstring = True

# ---------------------------------------------------------------- HTML, offline
html_theme = "furo"
html_title = f"fitgpp {release}"
html_static_path = ["_static"]
html_css_files = ["fitgpp.css"]
html_theme_options = {"navigation_with_keys": True}
# No math on these pages: MathJax would be a CDN script. Sphinx insists on a path, so it
# gets a local name that is never written, and setup() below fails the build if any page
# ever has math (rather than shipping a page whose math cannot render offline).
mathjax_path = "mathjax-is-not-bundled.js"
html_copy_source = False
html_show_sourcelink = False

# Warnings are errors (make docs passes -W); nothing is suppressed here on purpose.
suppress_warnings: list[str] = []

# The docs build runs with the repo as the working directory of nothing in particular;
# pages that need the repo root read it from here.
os.environ.setdefault("FITGPP_REPO", str(HERE.parent))


def _no_math(app, pagename, templatename, context, doctree):
    if context.get("has_maths_elements"):
        from sphinx.errors import ExtensionError
        raise ExtensionError(f"page {pagename!r} contains math; the docs are built offline "
                             "without MathJax: write it as code or plain text instead")


def setup(app):
    app.connect("html-page-context", _no_math)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
