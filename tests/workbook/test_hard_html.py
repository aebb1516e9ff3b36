"""Hard to break, round four (issue 37): a label cannot run code in a notebook nor kill its
kernel. A panel's numbers name the configuration and the baseline, its figures carry
captions, its finding and its charts name policies; each label (a researcher's policy, a
colleague's cache) reaches the live panel's HTML and the static copy saved in the notebook
as text, and a control character in it is drawn, not fatal to the renderer. The panel runs
in a child process: on the old code the renderer aborts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from fitgpp.workbook.views import finding_html
from html_tags import tags

SELECTED = "<img src=x onerror=alert(1)>\x1b"
BASELINE = "<script>alert(2)</script>|b"
CAPTION = "<svg onload=alert(3)> & <b>bold</b>"

PANEL = textwrap.dedent("""
    import json, sys
    from dataclasses import dataclass
    import altair as alt, pandas as pd
    from fitgpp.sim.policies.fifo import Fifo
    from fitgpp.studies.base import generic
    from fitgpp.studies.reproduce import Size, Study
    from fitgpp.workbook import static
    from fitgpp.workbook.panels import Panel
    selected, baseline, caption = json.loads(sys.argv[1])

    @dataclass(frozen=True)
    class Mine(Fifo):
        knob: float = 1.0

    def analyze(o):
        r = generic(o)
        df = pd.DataFrame({"x": [1.0, 2.0], "y": [1.0, 2.0], "k": [selected, baseline]})
        r.charts = {"w_fig": alt.Chart(df).mark_line().encode(x="x:Q", y="y:Q", color="k:N")
                    .properties(title=selected)}
        return r

    study = Study("w", "t", "q", policies={selected: {"policy": Mine, "knob": [1.0, 2.0]},
                                           baseline: {"policy": Mine}},
                  baseline={"policy": baseline}, analyze=analyze, captions={"fig": caption})
    shown = []

    class Handle:
        def __init__(self, obj):
            shown.append(obj)

        def update(self, obj, **kw):
            shown.append(obj)
    static._display = lambda obj, **kw: Handle(obj)
    p = Panel(study, Size(n_jobs=60, seeds=(0, 1), timeline_jobs=20), cache=sys.argv[2])
    p.static.show()
    boxes = [w.value for w in p.study_box.children if hasattr(w, "value")]
    print(json.dumps({"numbers": p.numbers.value, "finding": p.finding.value, "boxes": boxes,
                      "static": shown[0].data, "label": p.controls["policy"].value}))
""")




def harmless(html: str) -> None:
    """No element a label could have made: no script, no handler, no image but the static
    copy's own SVG pictures (which run nothing)."""
    for tag, attrs in tags(html).tags:
        assert tag not in ("script", "svg", "iframe", "object"), (tag, attrs)
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
        if tag == "img":
            assert set(attrs) <= {"alt", "src", "style"}, attrs
            assert attrs.get("style", "max-width: 100%; height: auto") == \
                "max-width: 100%; height: auto", attrs
            assert attrs["src"].startswith("data:image/svg+xml;base64,"), attrs


@pytest.fixture(scope="module")
def panel(tmp_path_factory):
    cache = tmp_path_factory.mktemp("hard-html")
    env = {**os.environ, "FITGPP_CACHE": str(cache)}
    p = subprocess.run([sys.executable, "-c", PANEL, json.dumps([SELECTED, BASELINE, CAPTION]),
                        str(cache)], capture_output=True, text=True, timeout=900, env=env)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_the_panels_numbers_show_the_labels_as_text(panel):
    harmless(panel["numbers"])
    text = "".join(tags(panel["numbers"]).text)
    assert "<img src=x onerror=alert(1)>" in text and "<script>alert(2)</script>|b" in text
    assert "\x1b" not in panel["numbers"] and "\\x1b" in text


def test_the_figure_captions_are_text(panel):
    assert panel["boxes"], panel
    for box in panel["boxes"]:
        harmless(box)
    assert any(CAPTION in "".join(tags(b).text) for b in panel["boxes"])


def test_the_finding_names_the_labels_as_text(panel):
    harmless(panel["finding"])
    assert "<img src=x onerror=alert(1)>" in "".join(tags(panel["finding"]).text)


def test_the_static_copy_saved_in_the_notebook_carries_no_markup_from_a_label(panel):
    html = panel["static"]
    harmless(html)
    text = "".join(tags(html).text)
    assert "<img src=x onerror=alert(1)>" in text and "<script>alert(2)</script>" in text
    assert CAPTION in text
    from fitgpp.workbook import static
    svgs = static.svgs(html)
    assert len(svgs) >= 2            # the charts, drawn although their titles hold ESC
    for svg in svgs:
        assert "\x1b" not in svg and "<script" not in svg and "onerror=" not in svg.replace(
            "onerror=alert(1)&gt;", "")


@pytest.mark.parametrize("label", ["<img src=x onerror=alert(1)>", "a\\<img src=x onerror=1>",
                                   "`x` <script>y</script>", "x`<b onclick=1>`y"])
def test_a_finding_shown_in_the_panel_starts_no_element(label):
    from fitgpp.analysis.escape import md_inert
    text = md_inert(f"**{label}** is best; `FIFO` against {label}: cannot tell.\n- {label}")
    harmless(finding_html(text))
    assert "<b>" in finding_html(text) and "<code>FIFO</code>" in finding_html(text)
