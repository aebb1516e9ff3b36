"""Export figures with what produced them, never silently overwriting.

    from fitgpp.figures.export import export
    export({"rq1_slowdown_cdf": chart}, "figures", config=r.config)

Each chart becomes ``NAME[__DIFF].png/.svg/.pdf`` in ``out_dir`` where ``DIFF`` lists the
parameters of ``config`` that differ from ``defaults`` (``__load1p3_max-preemptions5``;
a hash when that gets long). A name is safe in LaTeX's ``\\includegraphics``: letters,
digits, ``-`` and ``_``, and one dot, before the extension (:func:`stem`). ``subjects``
names a figure after the configuration it shows when that is not ``config`` (the
workbench's pinned run). The whole ``config`` goes

- into every file: a PNG ``tEXt`` chunk (keyword ``fitgpp``), an SVG ``<metadata>``
  element, the PDF document information (``/Subject``, added as an incremental update);
- and into ``manifest.json`` beside the figures: one entry per file with the chart name,
  the full configuration, what differs from the defaults, the size preset, DPI and time.

A file that exists is never replaced unless ``overwrite=True``: the new figure gets the
next free name (``NAME-2``), and all formats of one chart share that name.
:func:`read_config` reads the configuration back from any of the three formats.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import struct
import subprocess
import zlib
from pathlib import Path
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from fitgpp.figures.files import (MANIFEST, NAME, ExportError, _free_stem, _jsonable,  # noqa: F401
                                  _read_manifest, differs, file_inches, save_manifest, stem)
from fitgpp.figures.plots import DPI, FORMATS
from fitgpp.sim.validate import check_int

if TYPE_CHECKING:
    from fitgpp.analysis.tables import PeopleTable

KEYWORD = "fitgpp"
SVG_NS = "https://fitgpp.invalid/figure-config"   # a name for the element, never fetched
#: Highest PNG resolution export renders (a 3.5 in figure is then about 4200 px wide).
MAX_DPI = 1200


# ------------------------------------------------------------------ embedding
def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def embed_png(data: bytes, text: str) -> bytes:
    """``data`` with an ``iTXt`` chunk ``fitgpp`` holding ``text`` (UTF-8) before ``IEND``."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ExportError("not a PNG: cannot embed the configuration")
    end = data.rfind(b"IEND") - 4
    chunk = _png_chunk(b"iTXt", KEYWORD.encode() + b"\x00\x00\x00\x00\x00" + text.encode())
    return data[:end] + chunk + data[end:]


def embed_svg(data: bytes, text: str) -> bytes:
    """``data`` with ``<metadata><fitgpp:config>text</fitgpp:config></metadata>`` first in
    the root ``<svg>`` element."""
    s = data.decode()
    m = re.search(r"<svg\b[^>]*>", s)
    if not m:
        raise ExportError("not an SVG: cannot embed the configuration")
    meta = (f'<metadata><fitgpp:config xmlns:fitgpp="{SVG_NS}">{escape(text)}'
            "</fitgpp:config></metadata>")
    return (s[:m.end()] + meta + s[m.end():]).encode()


def _pdf_text(text: str) -> bytes:
    # a lone surrogate (a caption from a file name) as its escape, as the figure draws it
    return b"<FEFF" + text.encode("utf-16-be", "backslashreplace").hex().upper().encode() + b">"


def embed_pdf(data: bytes, text: str, title: str) -> bytes:
    """``data`` with an incremental update whose document information keeps the old
    entries and adds ``/Title`` and ``/Subject`` (the configuration)."""
    trailer = data.rfind(b"trailer")
    start = re.search(rb"startxref\s+(\d+)\s+%%EOF\s*$", data)
    if trailer < 0 or not start:
        raise ExportError("PDF without a classic trailer: cannot embed the configuration")
    tr = data[trailer:start.start()]
    size = int(re.search(rb"/Size\s+(\d+)", tr).group(1))
    root = re.search(rb"/Root\s+(\d+\s+\d+\s+R)", tr).group(1)
    old = b""
    info = re.search(rb"/Info\s+(\d+)\s+(\d+)\s+R", tr)
    if info:
        obj = re.search(rb"\n" + info.group(1) + rb"\s+" + info.group(2) + rb"\s+obj\s*<<(.*?)>>\s*endobj",
                        data, re.S)
        old = re.sub(rb"/(Title|Subject)\s*(\([^)]*\)|<[^>]*>)", b"", obj.group(1)) if obj else b""
    body = data if data.endswith(b"\n") else data + b"\n"
    offset = len(body)
    obj = (f"{size} 0 obj\n<<".encode() + old + b" /Title " + _pdf_text(title)
           + b" /Subject " + _pdf_text(text) + b" >>\nendobj\n")
    xref = len(body) + len(obj)
    tail = (f"xref\n0 1\n0000000000 65535 f \n{size} 1\n{offset:010d} 00000 n \ntrailer\n<< /Size {size + 1} /Root ".encode()
            + root + f" /Info {size} 0 R /Prev {int(start.group(1))} >>\nstartxref\n{xref}\n"
                     "%%EOF\n".encode())
    return body + obj + tail


def read_config(path) -> dict:
    """The configuration embedded by :func:`export` in a PNG, SVG or PDF file."""
    path = Path(path)
    data = path.read_bytes()
    ext = path.suffix.lower()
    if ext == ".png":
        i = 8
        while i < len(data):
            n, kind = struct.unpack(">I4s", data[i:i + 8])
            body = data[i + 8:i + 8 + n]
            if kind == b"iTXt" and body.startswith(KEYWORD.encode() + b"\x00"):
                return json.loads(body[len(KEYWORD) + 5:].decode())
            i += 12 + n
    elif ext == ".svg":
        m = re.search(r"<fitgpp:config[^>]*>(.*?)</fitgpp:config>", data.decode(), re.S)
        if m:
            from xml.sax.saxutils import unescape
            return json.loads(unescape(m.group(1)))
    elif ext == ".pdf":
        hits = re.findall(rb"/Subject\s*<FEFF([0-9A-F]*)>", data)
        if hits:
            return json.loads(bytes.fromhex(hits[-1].decode()).decode("utf-16-be"))
    raise ExportError(f"{path}: no fitgpp configuration embedded")


# ------------------------------------------------------------------ writing
def _render(chart, ext: str, dpi: int, cache=None) -> bytes:
    from fitgpp.figures.plots import render          # the one render function
    return render(chart, ext, dpi=dpi, cache=cache)


def laid_out(chart, cache=None) -> dict:
    """``chart``'s Vega-Lite dict laid out at its printed width
    (:func:`fitgpp.figures.plots.fit_width`, which draws it several times to measure it). With a
    figure ``cache`` (a directory), the layout is kept in ``cache/layout``, keyed by the
    sha256 of the spec (JSON, sorted keys), the vl-convert version and the source of
    ``fitgpp/figures/plots/render.py``: an unchanged chart is read from there, not drawn again. A
    chart is validated against the Vega-Lite schema when it is laid out, so a spec read
    from the layout cache was validated when it was kept. An unreadable entry is laid
    out again."""
    from fitgpp.figures.plots import fit_width
    from fitgpp.figures.plots.render import keep, kept_bytes
    if cache is None:
        return fit_width(chart)
    spec = chart.to_dict(validate=False) if hasattr(chart, "to_dict") else chart
    path = _layout_file(spec, cache)
    try:   # kept_bytes: a regular file only (a FIFO in its place would block for ever)
        kept = json.loads(kept_bytes(path) or b"null")
        if _a_layout(kept):
            return kept
    except (ValueError, RecursionError):  # (a file cut short, not UTF-8, nested too deep)
        pass
    out = fit_width(chart)
    keep(path, json.dumps(out).encode())  # (a cache it cannot write is gone on without)
    return out


def _a_layout(kept) -> bool:
    """Whether a layout read from the cache is a spec as :func:`laid_out` keeps them."""
    marks = ("mark", "layer", "hconcat", "vconcat", "concat", "facet", "repeat", "spec")
    return isinstance(kept, dict) and isinstance(kept.get("$schema"), str) and \
        any(k in kept for k in marks)


def _layout_file(spec: dict, cache) -> Path:
    import importlib

    import vl_convert as vlc

    # the module that lays out (its name is shadowed by its function render in plots)
    source = Path(importlib.import_module(".plots.render", __package__).__file__).read_bytes()
    h = hashlib.sha256(json.dumps(spec, sort_keys=True).encode())
    h.update(f"\0{vlc.__version__}\0".encode() + source)
    key = h.hexdigest()
    return Path(cache) / "layout" / key[:2] / f"{key}.json"


def _write(path: Path, data: bytes, overwrite: bool) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(data)
        if overwrite:
            os.replace(tmp, path)
            return
        try:
            os.link(tmp, path)    # fails if path appeared meanwhile: never replaced silently
        except FileExistsError:
            raise _Taken(f"{path} appeared while exporting; not replaced") from None
        except OSError:           # a file system without hard links: create exclusively
            try:
                with open(path, "xb") as f:
                    f.write(data)
            except FileExistsError:
                raise _Taken(f"{path} appeared while exporting; not replaced") from None
    finally:
        tmp.unlink(missing_ok=True)


class _Taken(ExportError):  # a name another writer took between its choice and the write
    pass


def git_commit() -> str | None:
    """The commit checked out where this package's files are tracked by git (a clone or an
    editable install), else None (an installed wheel, no git, or files git does not track)."""
    here = Path(__file__).resolve().parent
    try:
        tracked = subprocess.run(["git", "-C", str(here), "ls-files", "--error-unmatch",
                                  Path(__file__).name], capture_output=True, timeout=10)
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()
    ok = tracked.returncode == 0 and head.returncode == 0
    return commit if ok and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit) else None


def git_modified(commit: str | None = "") -> list[str] | None:
    """The files of the whole package (``fitgpp/``, not only this folder: an edited
    ``fitgpp/sim/engine.py`` changes every result) that differ from :func:`git_commit`:
    modified, staged, deleted or new and not ignored, as git names them from the
    repository's root (``["fitgpp/sim/engine.py"]``); None where there is no commit.
    ``commit``: :func:`git_commit`'s answer when the caller has it already."""
    if (git_commit() if commit == "" else commit) is None:
        return None
    package = Path(__file__).resolve().parents[1]
    try:
        r = subprocess.run(["git", "-C", str(package), "status", "--porcelain",
                            "--untracked-files=all", "--no-renames", "--", "."],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    return sorted(line[3:].strip('"') for line in r.stdout.splitlines() if len(line) > 3)


def git_dirty(commit: str | None = "") -> bool | None:
    """Whether the package's files differ from :func:`git_commit` (edits not yet committed,
    so the commit alone does not say what ran; :func:`git_modified` says which); None where
    there is no commit."""
    modified = git_modified(commit)
    return None if modified is None else bool(modified)


def provenance() -> dict:
    """What a manifest entry records about the code: the package version, the git commit,
    whether the package's files differ from it and which (``git_modified``)."""
    from fitgpp.sim.run import __version__
    commit = git_commit()
    modified = git_modified(commit)
    return {"fitgpp_version": __version__, "git_commit": commit,
            "git_dirty": None if modified is None else bool(modified), "git_modified": modified}


def _caption(chart) -> str:
    """The title ``chart`` draws (its text, without the notes below it)."""
    t = (chart.to_dict() if hasattr(chart, "to_dict") else chart).get("title", "")
    t = t.get("text", "") if isinstance(t, dict) else t
    return " ".join(t) if isinstance(t, list) else str(t)


class FiguresRefused(ExportError):
    """Some figures failed the figure check and were not written; everything else was.
    ``refused``: ``{name: the check's message}``; ``written``: the paths written."""

    def __init__(self, refused: dict[str, str], written: list[Path]):
        self.refused, self.written = refused, written
        super().__init__(f"{len(refused)} figure(s) refused, not written (the other "
                         f"{len(written)} file(s) were written):\n" + "\n".join(refused.values()))


def export(charts, out_dir, *, config: dict, defaults: dict | None = None,
           formats=FORMATS, dpi: int = DPI, overwrite: bool = False, check: bool = True,
           log=None, cache=None, captions: dict | None = None, subjects: dict | None = None,
           partial: bool = False) -> list[Path]:
    """Write ``charts`` (``{name: chart}``) into ``out_dir`` in every format, with ``config``
    embedded and recorded in ``out_dir/manifest.json``; return the paths written.

    ``defaults``: the configuration's defaults; parameters that differ from them are put
    in the file names. ``subjects``: ``{name: configuration}`` of a figure that shows
    another configuration than ``config`` (its name then says what differs in that one).
    ``captions``: ``{name: caption}``, recorded in the manifest (``"caption"``; without one,
    the title the chart draws); ``"title"`` is always the drawn title. ``check``: refuse
    charts that fail :func:`fitgpp.figures.check.check`: nothing is written (a
    :class:`~fitgpp.figures.check.FigureError`), or with ``partial=True`` every other chart is
    written and then :class:`FiguresRefused` names the refused ones with the check's reasons.
    ``log``: called with one line per file written (e.g. ``print``). ``cache``: the
    figure cache :func:`fitgpp.figures.plots.render` reads rendered files from."""
    from fitgpp.sim.run import __version__
    formats = [f if f.startswith(".") else f".{f}" for f in formats]
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ExportError(f"cannot export as {', '.join(bad)}: use {', '.join(FORMATS)}")
    if not isinstance(charts, dict):
        raise ExportError("charts: pass {name: chart}")
    check_int(dpi, "export dpi", 1, MAX_DPI, ExportError)  # a PNG of dpi / 72 px per point
    if isinstance(out_dir, bool) or not isinstance(out_dir, (str, os.PathLike)) or \
            not str(out_dir).strip():
        raise ExportError(f"output folder: expected a path, got {out_dir!r}"[:300])
    try:
        cfg = _jsonable(config)
        shows = {n: _jsonable(c) for n, c in (subjects or {}).items()}
    except (TypeError, ValueError) as exc:
        raise ExportError(f"config cannot be written as JSON: {exc}") from None
    diff = differs(cfg, None if defaults is None else _jsonable(defaults))
    for name in charts:  # every name first: a bad one leaves nothing written
        stem(name, cfg, None)
    out = Path(out_dir).expanduser()
    manifest = _read_manifest(out / MANIFEST)
    # each chart as its Vega-Lite dict once (validated once): the check, the caption and
    # every format read that dict, laid out at its printed width (panels widened or
    # narrowed, fonts kept in pt)
    charts = {name: laid_out(chart, cache) for name, chart in charts.items()}
    # drawn as SVG once: the figure check measures this drawing, the .svg file is this drawing
    svgs = ({name: _render(chart, ".svg", dpi, cache) for name, chart in charts.items()}
            if check or ".svg" in formats else {})
    # all charts first: a refused chart leaves nothing half-written
    refused = _refused(charts, svgs, partial) if check else {}
    charts = {n: c for n, c in charts.items() if n not in refused}
    _make_dir(out)
    written: list[Path] = []
    try:
        _write_all(charts, out, cfg, defaults, diff, formats, dpi, overwrite, manifest, log,
                   written, __version__, cache, svgs,
                   {"captions": captions or {}, "subjects": shows})
    except BaseException as exc:  # leave nothing behind: no figure the manifest does not list
        for path in written:
            path.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise ExportError(f"cannot write in {out} ({exc.strerror or exc})") from None
        raise
    if refused:
        raise FiguresRefused(refused, written)
    return written


def _refused(charts: dict, svgs: dict, partial: bool) -> dict[str, str]:
    """``{name: why}`` of the charts the figure check refuses (each alone, then two that draw
    the same data); without ``partial`` the first refusal is raised."""
    from fitgpp.figures.check import FigureError, assert_paper_ready
    from fitgpp.figures.print_rules import identical
    refused: dict[str, str] = {}
    for name, chart in charts.items():
        try:
            assert_paper_ready(chart, name, svg=svgs[name])
        except FigureError as exc:
            if not partial:
                raise
            refused[name] = str(exc)
    same = identical({n: c for n, c in charts.items() if n not in refused})
    if same and not partial:
        raise ExportError("identical figures:\n  " + "\n  ".join(map(str, same)))
    refused.update({p.where: f"{p.where} is not written: {p.message}" for p in same})
    return refused


def _make_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ExportError(f"output folder {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"output folder {out}: cannot create it "
                          f"({exc.strerror or exc})") from None


def _write_all(charts, out, cfg, defaults, diff, formats, dpi, overwrite, manifest, log,
               written, version, cache=None, svgs=None, about=None) -> None:
    """Render and write every chart in every format, then the manifest; each path written
    is appended to ``written`` as it is (so that a failure can take them back). ``svgs``:
    ``{name: SVG bytes}`` already rendered from these very specs; ``about``: the
    ``captions`` and ``subjects`` of :func:`export`."""
    manifest_path = out / MANIFEST
    prov = {**provenance(), "fitgpp_version": version}
    for name, chart in charts.items():
        for _ in range(100):  # another writer in the same folder may take the name first
            mine = len(written)
            try:
                _write_chart(name, chart, out, cfg, defaults, diff, formats, dpi, overwrite,
                             manifest, log, written, prov, cache, svgs, about or {})
                break
            except _Taken:
                for path in written[mine:]:
                    path.unlink(missing_ok=True)
                    manifest["figures"].pop(path.name, None)
                del written[mine:]
        else:
            raise ExportError(f"{out}: no free name for figure {name!r} (others took them)")
    save_manifest(manifest_path, manifest)


def _write_chart(name, chart, out, cfg, defaults, diff, formats, dpi, overwrite, manifest, log,
                 written, prov, cache, svgs, about) -> None:
    """One chart in every format under the next free name (see :func:`_write_all`)."""
    base_cfg = _jsonable(defaults) if defaults is not None else None
    shows = about.get("subjects", {}).get(name, cfg)
    base = _free_stem(out, stem(name, shows, base_cfg), formats, overwrite)
    spec = chart.to_dict() if hasattr(chart, "to_dict") else chart
    meta = (spec.get("usermeta") or {}).get("fitgpp", {})
    title = _caption(chart)
    record = {"chart": name, "caption": about.get("captions", {}).get(name) or title,
              "title": title, "config": cfg,
              "differs_from_defaults": diff if defaults is not None else None,
              **({"shows": shows} if shows is not cfg else {}),
              "preset": meta.get("preset"), "inches": meta.get("inches"),
              **prov,
              "written": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    text = json.dumps({k: record[k] for k in ("chart", "config", "differs_from_defaults",
                                              "fitgpp_version")}, sort_keys=True)
    for ext in formats:
        data = (svgs[name] if ext == ".svg" and name in (svgs or {})
                else _render(chart, ext, dpi, cache))
        if ext == ".png":
            data = embed_png(data, text)
        elif ext == ".svg":
            data = embed_svg(data, text)
        else:
            data = embed_pdf(data, text, title or name)
        path = out / f"{base}{ext}"
        _write(path, data, overwrite)
        manifest["figures"][path.name] = {**record, "format": ext[1:],
                                          "inches": round(file_inches(data, ext, dpi), 3),
                                          "dpi": dpi if ext == ".png" else None,
                                          "bytes": len(data)}
        written.append(path)
        if log:
            log(f"wrote {path}")


# ------------------------------------------------------------------ tables
def export_table(t: PeopleTable, name: str, out_dir, *, config: dict) -> list:
    """Write ``t`` as ``NAME.csv`` (:func:`~fitgpp.analysis.tables.to_csv`, text cells a
    spreadsheet would run as formulas defused) and ``NAME.tex``
    (:func:`~fitgpp.analysis.tables.to_latex`) in ``out_dir``, recorded under ``"tables"``
    in the figures' ``manifest.json`` with ``config``; an existing file is never replaced
    (both get the next free name, ``NAME-2``). A write that fails is an
    :class:`ExportError` and leaves no file behind. Returns the two paths."""
    import datetime as dt

    from fitgpp.analysis.tables import to_csv, to_latex
    out = Path(out_dir).expanduser()
    cfg = _jsonable(config)
    try:   # (the .tex shows it escaped; the CSV is data, not repaired)
        files = [(".csv", to_csv(t).encode()), (".tex", to_latex(t).encode())]
    except UnicodeEncodeError as exc:
        raise ExportError(f"cannot write table {name!r}: its text holds "
                          f"{exc.object[exc.start:exc.end]!r}, half of a UTF-16 pair (a lone "
                          f"surrogate), which a UTF-8 file cannot hold (around "
                          f"{exc.object[max(0, exc.start - 30):exc.start]!r})"[:300]) from None
    manifest = _read_manifest(out / MANIFEST)
    base = _free_stem(out, stem(name, cfg, None), (".csv", ".tex"), False)
    _make_dir(out)
    record = {"table": name, "caption": t.caption, "config": cfg, "rows": len(t.full),
              **provenance(),
              "written": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    paths = []
    try:
        for ext, data in files:
            path = out / f"{base}{ext}"
            _write(path, data, False)
            paths.append(path)
            manifest.setdefault("tables", {})[path.name] = {**record, "format": ext[1:]}
        save_manifest(out / MANIFEST, manifest)
    except BaseException as exc:  # leave no file the manifest does not list
        for path in paths:
            path.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise ExportError(f"cannot write table {name!r} in {out} "
                              f"({exc.strerror or exc})") from None
        raise
    return paths
