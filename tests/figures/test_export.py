"""fitgpp.figures.export: names carry what differs from the defaults, files and manifest carry the whole
configuration, and nothing is overwritten unless asked."""

from __future__ import annotations

import json
import re
import struct
import xml.etree.ElementTree as ET

import altair as alt
import pandas as pd
import pytest

from fitgpp.figures import export as E
from fitgpp.figures import check as figcheck, plots

DEFAULTS = {"policy": "fitgpp", "s": 4.0, "load": 0.9, "seed": 0, "model": "paper-default"}


@pytest.fixture(scope="module")
def chart():
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [1.0, 4.0, 9.0], "k": ["a", "a", "a"]})
    return plots._finish(alt.Chart(df).mark_line(clip=True).encode(
        x=alt.X("x:Q", title="time (h)"), y=alt.Y("y:Q", title="waiting jobs"),
        color=alt.Color("k:N", title="queue")).properties(width=plots._panel(plots.preset("column"), 1)),
        plots.preset("column"), "A small test figure")


def test_names_carry_what_differs_and_files_carry_everything(chart, tmp_path):
    cfg = {**DEFAULTS, "load": 1.3000000000000003, "model": "paper-wide-te"}
    paths = E.export({"util": chart}, tmp_path, config=cfg, defaults=DEFAULTS)
    assert [p.name for p in paths] == [f"util__load1p3_model-paper-wide-te{x}"
                                       for x in (".png", ".svg", ".pdf")]
    for p in paths:
        got = E.read_config(p)
        assert got["config"] == cfg and got["chart"] == "util", p
        assert got["differs_from_defaults"] == {"load": 1.3000000000000003,
                                                "model": "paper-wide-te"}
    man = json.loads((tmp_path / E.MANIFEST).read_text())["figures"]
    assert set(man) == {p.name for p in paths}
    assert man[paths[0].name]["config"] == cfg and man[paths[0].name]["dpi"] == 300
    assert man[paths[0].name]["preset"] == "column"
    assert man[paths[0].name]["caption"] == "A small test figure"


def test_names_are_safe_in_latex_readable_and_stable():
    """Issue 35: ``slowdown_cdf__load=0.9_n_seeds=5_s=5.5.png`` (``=`` and extra dots trouble
    LaTeX's \\includegraphics): a name is letters, digits, ``-`` and ``_``, one dot before the
    extension, and still says what differs (``load0p9``); the same configuration gives the
    same name, two configurations two names."""
    cfg = {"load": 0.9, "n_seeds": 5, "s": 5.5, "delta": -1.5, "tiny": 1e-5,
           "model": "my model.v2", "flag": True, "none": None, "max_preemptions": 10}
    name = E.stem("slowdown_cdf", cfg, {}, limit=200)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", name), name
    assert name == ("slowdown_cdf__delta-m1p5_flag-true_load0p9_max-preemptions10_"
                    "model-my-model-v2_n-seeds5_none-none_s5p5_tiny1em05")
    assert E.stem("slowdown_cdf", dict(cfg), {}, limit=200) == name       # stable
    assert E.stem("slowdown_cdf", {**cfg, "s": 5.0}, {}, limit=200) != name   # unique
    assert re.fullmatch(r"slowdown_cdf__cfg-[0-9a-f]{10}", E.stem("slowdown_cdf", cfg, {}))
    for bad in ("a.b", "a=b", "a b", "a/b"):
        with pytest.raises(E.ExportError, match="letters, digits, _ and -"):
            E.stem(bad, cfg, {})


def test_a_figure_of_another_configuration_is_named_after_it(chart, tmp_path):
    """The workbench's pinned FIFO figure was named after the current configuration's s
    (``utilization_pinned__...s=5.5``): ``subjects`` names a figure after what it shows."""
    cfg = {**DEFAULTS, "s": 5.5}
    paths = E.export({"now": chart, "pinned": chart}, tmp_path, config=cfg,
                     defaults=DEFAULTS, formats=["svg"], check=False,
                     subjects={"pinned": {**DEFAULTS, "policy": "fifo"}})
    assert [p.name for p in paths] == ["now__s5p5.svg", "pinned__policy-fifo.svg"]
    man = json.loads((tmp_path / E.MANIFEST).read_text())["figures"]
    assert man["pinned__policy-fifo.svg"]["config"] == cfg          # the whole configuration
    assert man["pinned__policy-fifo.svg"]["shows"]["policy"] == "fifo"


def test_png_is_300_dpi_at_the_preset_width(chart, tmp_path):
    png = E.export({"f": chart}, tmp_path, config=DEFAULTS, formats=[".png"])[0].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    i = png.find(b"pHYs")
    ppm_x, ppm_y, unit = struct.unpack(">IIB", png[i + 4:i + 13])
    assert unit == 1 and round(ppm_x * 0.0254) == 300 == round(ppm_y * 0.0254)
    width = struct.unpack(">I", png[16:20])[0]
    assert width / 300 <= 3.3 + 0.05     # column preset: fits a 3.3 in column at 300 dpi


def test_svg_metadata_is_valid_xml(chart, tmp_path):
    svg = E.export({"f": chart}, tmp_path, config=DEFAULTS, formats=["svg"])[0]
    root = ET.fromstring(svg.read_bytes())
    el = root.find(f"{{http://www.w3.org/2000/svg}}metadata/{{{E.SVG_NS}}}config")
    assert el is not None and json.loads(el.text)["config"] == DEFAULTS


def test_pdf_update_keeps_a_consistent_cross_reference(chart, tmp_path):
    pdf = E.export({"f": chart}, tmp_path, config=DEFAULTS, formats=["pdf"])[0].read_bytes()
    assert pdf[:5] == b"%PDF-" and pdf.rstrip().endswith(b"%%EOF")
    start = int(re.findall(rb"startxref\s+(\d+)", pdf)[-1])
    assert pdf[start:start + 4] == b"xref"
    num, off = re.search(rb"xref\n0 1\n.*?\n(\d+) 1\n(\d{10}) 00000 n", pdf[start:]).groups()
    assert pdf[int(off):].startswith(num + b" 0 obj")
    prev = int(re.search(rb"/Prev (\d+)", pdf[start:]).group(1))
    assert pdf[prev:prev + 4] == b"xref"                   # the original table is still there
    assert b"/Title <FEFF" in pdf and b"/Producer" in pdf  # old entries kept


def test_never_overwrites_unless_asked(chart, tmp_path):
    first = E.export({"f": chart}, tmp_path, config=DEFAULTS)
    before = [p.read_bytes() for p in first]
    second = E.export({"f": chart}, tmp_path, config=DEFAULTS)
    assert [p.name for p in second] == ["f-2.png", "f-2.svg", "f-2.pdf"]
    assert [p.read_bytes() for p in first] == before
    (tmp_path / "g.pdf").write_text("someone else's file")
    third = E.export({"g": chart}, tmp_path, config=DEFAULTS)   # one format taken: all move
    assert [p.stem for p in third] == ["g-2"] * 3
    assert (tmp_path / "g.pdf").read_text() == "someone else's file"
    again = E.export({"f": chart}, tmp_path, config=DEFAULTS, overwrite=True)
    assert [p.name for p in again] == ["f.png", "f.svg", "f.pdf"]
    assert len(json.loads((tmp_path / E.MANIFEST).read_text())["figures"]) == 9   # f, f-2, g-2; f rewritten in place
    assert not list(tmp_path.glob(".*.tmp"))


def test_long_differences_become_a_hash_and_the_manifest_keeps_them(chart, tmp_path):
    cfg = {**DEFAULTS, **{f"knob_{i}": i * 1.5 for i in range(20)}}
    p = E.export({"f": chart}, tmp_path, config=cfg, defaults=DEFAULTS, formats=["svg"])[0]
    assert re.fullmatch(r"f__cfg-[0-9a-f]{10}\.svg", p.name)
    assert E.read_config(p)["differs_from_defaults"]["knob_19"] == 28.5


def test_a_refused_figure_is_named_and_every_other_one_written(chart, tmp_path):
    """Issue 35: one figure refused by the check left nothing written. With ``partial`` the
    others are written (and listed in the manifest), then FiguresRefused names the refused one
    and why; without it nothing is written, as before."""
    bad = {k: v for k, v in chart.to_dict().items() if k != "title"}   # no caption: refused
    with pytest.raises(E.FiguresRefused, match=r"(?s)1 figure\(s\) refused.*bad is not "
                                               r"paper-ready.*\[caption\]") as got:
        E.export({"good": chart, "bad": bad}, tmp_path, config=DEFAULTS, formats=["svg"],
                 partial=True, captions={"good": "A caption of its own."})
    assert [p.name for p in got.value.written] == ["good.svg"] and set(got.value.refused) == {"bad"}
    man = json.loads((tmp_path / E.MANIFEST).read_text())["figures"]
    assert set(man) == {"good.svg"} and man["good.svg"]["caption"] == "A caption of its own."
    assert man["good.svg"]["title"] == "A small test figure"
    with pytest.raises(figcheck.FigureError, match="bad is not paper-ready"):
        E.export({"other": chart, "bad": bad}, tmp_path / "all", config=DEFAULTS)
    assert not (tmp_path / "all").exists()


def test_bad_requests_name_what_is_wrong(chart, tmp_path):
    with pytest.raises(E.ExportError, match="gif"):
        E.export({"f": chart}, tmp_path, config={}, formats=[".gif"])
    with pytest.raises(E.ExportError, match="figure name 'a/b'"):
        E.export({"a/b": chart}, tmp_path, config={})
    with pytest.raises(E.ExportError, match="no fitgpp configuration"):
        (tmp_path / "x.svg").write_text("<svg/>")
        E.read_config(tmp_path / "x.svg")
    untitled = alt.Chart(pd.DataFrame({"a": [1]})).mark_point().encode(x="a:Q")
    with pytest.raises(figcheck.FigureError, match="untitled is not paper-ready"):
        E.export({"fine": chart, "untitled": untitled}, tmp_path, config={})
    assert not list(tmp_path.glob("untitled*")) and not list(tmp_path.glob("fine*"))


def test_pdf_reads_back_in_a_strict_pdf_reader(chart, tmp_path):
    import pypdf  # a dev dependency: this check always runs
    cfg = {**DEFAULTS, "note": "a (b) \\ c, ünïcode"}
    pdf = E.export({"f": chart}, tmp_path, config=cfg, formats=["pdf"])[0]
    meta = pypdf.PdfReader(str(pdf), strict=True).metadata
    assert json.loads(meta["/Subject"])["config"] == cfg
    assert meta["/Title"] == "A small test figure" and meta["/Producer"]


def test_results_md_embeds_its_figures_by_relative_paths(chart, tmp_path):
    from fitgpp.studies import reproduce
    cols = ["te_p95", "be_median", "be_p95", "change_te_p95", "change_be_median", "change_be_p95",
            "preemptions_per_be"]
    row = {"grace_scale": 1.0, "policy": "FitGpp s=4"}
    for c in cols:
        row.update({c: 1.0, f"{c}_lo": 0.5, f"{c}_hi": 1.5})
    out = tmp_path / "report"
    r = reproduce.RQResult("rq3", "RQ3: t", "q", pd.DataFrame([row]), {"rq3_x": chart},
                           finding=f"read from {out}/rq3.csv", config={"cache": str(out / "c")})
    figs = plots.save_all(r.charts, out, formats=(".png", ".svg"))
    md = reproduce.write_results({"rq3": r}, out, reproduce.QUICK, 1.0, figs).read_text()
    assert "![A small test figure](rq3_x.png)" in md
    assert "[rq3_x.svg](rq3_x.svg)" in md
    assert str(tmp_path) not in md and "read from rq3.csv" in md


def test_the_manifest_records_the_version_and_the_commit(chart, tmp_path, monkeypatch):
    import subprocess
    from pathlib import Path
    from fitgpp.sim.run import __version__
    pkg = Path(E.__file__).resolve().parent
    head = subprocess.run(["git", "-C", str(pkg), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{40}", head), "run from a git checkout of fitgpp"
    E.export({"f": chart}, tmp_path / "a", config=DEFAULTS, formats=["svg"])
    entry = json.loads((tmp_path / "a" / E.MANIFEST).read_text())["figures"]["f.svg"]
    assert entry["git_commit"] == head and entry["fitgpp_version"] == __version__
    dirty = subprocess.run(["git", "-C", str(pkg.parent), "status", "--porcelain",   # fitgpp/
                            "--untracked-files=all", "--", "."], capture_output=True, text=True)
    assert entry["git_dirty"] is bool(dirty.stdout.strip())
    # the package's files in a git work tree that does not track them (a venv inside some
    # other project's repository): not that project's commit
    other = tmp_path / "project"
    (other / "venv").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "other"], check=True)
    (other / "venv" / "export.py").write_text("")
    monkeypatch.setattr(E, "__file__", str(other / "venv" / "export.py"))
    assert E.git_commit() is None
    monkeypatch.undo()
    # no git on PATH: null, and the export still succeeds
    monkeypatch.setenv("PATH", str(tmp_path))
    E.export({"f": chart}, tmp_path / "b", config=DEFAULTS, formats=["svg"])
    entry = json.loads((tmp_path / "b" / E.MANIFEST).read_text())["figures"]["f.svg"]
    assert entry["git_commit"] is None and entry["git_dirty"] is None
    assert entry["fitgpp_version"] == __version__


def test_the_manifest_says_when_the_package_differs_from_its_commit(chart, tmp_path,
                                                                     monkeypatch):
    """A figure made from edited, uncommitted code is not what its commit makes: the entry
    says git_dirty true (and false once the edit is committed)."""
    import subprocess
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "pkg" / "export.py").write_text("a = 1\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    monkeypatch.setattr(E, "__file__", str(repo / "pkg" / "export.py"))
    assert E.git_dirty() is False
    (repo / "pkg" / "export.py").write_text("a = 2\n")
    assert E.git_dirty() is True and E.provenance()["git_dirty"] is True
    E.export({"f": chart}, tmp_path / "out", config=DEFAULTS, formats=["svg"])
    entry = json.loads((tmp_path / "out" / E.MANIFEST).read_text())["figures"]["f.svg"]
    assert entry["git_dirty"] is True and re.fullmatch(r"[0-9a-f]{40}", entry["git_commit"])


def test_files_are_laid_out_at_the_preset_width_and_the_manifest_says_so(chart, tmp_path):
    """The chart is made about 3.0 in wide; export lays it out at 3.3 in (not scaled: the
    fonts keep their points), and every file and its manifest entry say 3.3 in."""
    assert abs(E.file_inches(plots.render(chart, ".svg"), ".svg") - 3.3) > 0.05
    paths = E.export({"f": chart}, tmp_path, config=DEFAULTS)
    man = json.loads((tmp_path / E.MANIFEST).read_text())["figures"]
    for p in paths:
        got = E.file_inches(p.read_bytes(), p.suffix, 300)
        assert abs(got - 3.3) < 0.01 and abs(man[p.name]["inches"] - got) < 0.001, (p, got)
    svg = paths[1].read_text()
    assert 'font-size="7px"' in svg or "font-size: 7px" in svg or 'font-size="7"' in svg


def test_a_kept_layout_gives_the_same_files_without_drawing_to_measure(chart, tmp_path,
                                                                       monkeypatch):
    """With a figure cache, the second export reads the layout and the drawings from it:
    no layout run, no vl-convert call, and byte-identical files; a damaged layout entry is
    laid out again."""
    import sys
    R = sys.modules["fitgpp.figures.plots.render"]
    cache = tmp_path / "figures"
    first = E.export({"f": chart}, tmp_path / "a", config=DEFAULTS, cache=cache)
    kept = list((cache / "layout").rglob("*.json"))
    assert len(kept) == 1

    def boom(*a, **k):
        raise AssertionError("drew the chart again")
    for name in ("fit_width", "_measure"):
        monkeypatch.setattr(R, name, boom)
    monkeypatch.setattr(plots, "fit_width", boom)
    for fn in ("vegalite_to_svg", "vegalite_to_png", "vegalite_to_pdf"):
        monkeypatch.setattr(f"vl_convert.{fn}", boom)
    second = E.export({"f": chart}, tmp_path / "b", config=DEFAULTS, cache=cache)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    monkeypatch.undo()
    kept[0].write_text("{not json")
    third = E.export({"f": chart}, tmp_path / "c", config=DEFAULTS, cache=cache)
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in third]
    assert json.loads(kept[0].read_text())["usermeta"]["fitgpp"]["laid_out"] is True


def test_the_width_rule_measures_the_drawing_it_is_given(chart):
    """The figure check measures the SVG export hands it: a drawing of another width is
    refused, the drawing of the laid-out spec passes."""
    spec = plots.fit_width(chart)
    assert figcheck.check(spec, svg=plots.render(spec, ".svg")) == []
    probs = figcheck.check(spec, svg=plots.render(chart, ".svg"))
    assert [p.rule for p in probs] == ["width"] and "for a 3.3 in preset" in str(probs[0])
    with pytest.raises(figcheck.FigureError, match="no width"):
        figcheck.check(spec, svg=b"<svg></svg>")
