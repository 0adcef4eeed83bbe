"""The HTML report in a real browser: headless Chromium loads it, every plot decodes, tables have rows.

Skipped (with the reason) where no Chromium is installed; on Debian: apt-get install -y chromium.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
import report_samples as samples

from gemmlab.report import content, html

pytestmark = pytest.mark.browser

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT_S = 120  # a cold headless start takes 1-3 s here; a hang must fail the test, not the CI job

# Runs after load; writes what it found into #browser-check for --dump-dom to carry out.
CHECK_SCRIPT = """
<script>
window.addEventListener('load', function () {
  var imgs = Array.prototype.map.call(document.images, function (im) {
    var box = im.getBoundingClientRect();
    return {alt: im.alt, complete: im.complete, naturalWidth: im.naturalWidth, shownWidth: box.width};
  });
  var svgs = Array.prototype.map.call(document.querySelectorAll('svg'), function (s) {
    var b = s.getBBox(); return {width: b.width, height: b.height};
  });
  var tables = Array.prototype.map.call(document.querySelectorAll('table'), function (t) {
    return {cls: t.className, bodyRows: t.tBodies.length ? t.tBodies[0].rows.length : 0,
            visible: t.getBoundingClientRect().height > 0};
  });
  var out = document.createElement('pre');
  out.id = 'browser-check';
  out.textContent = JSON.stringify({imgs: imgs, svgs: svgs, tables: tables,
                                    cards: document.querySelectorAll('article.card').length});
  document.body.appendChild(out);
});
</script>
"""


def browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def chromium() -> str:
    path = browser()
    if path is None:
        pytest.skip(f"no headless browser: none of {', '.join(BROWSERS)} is on PATH (Debian: apt-get install -y chromium)")
    return path


def run_browser(exe: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    argv = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", *args]
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{exe} did not finish within {TIMEOUT_S} s: {' '.join(argv)}")


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> tuple[Path, content.Report]:
    rep = content.build(samples.run())  # ladder + timing + sweep + roofline, real diagnoses
    page = tmp_path_factory.mktemp("page") / "report.html"
    page.write_text(html.render(rep), encoding="utf-8")
    return page, rep


def test_every_plot_decodes_and_every_table_has_rows(chromium, report_page, tmp_path):
    page, rep = report_page
    checked = tmp_path / "checked.html"
    checked.write_text(page.read_text().replace("</body>", CHECK_SCRIPT + "</body>"), encoding="utf-8")
    proc = run_browser(chromium, tmp_path / "profile", "--dump-dom", checked.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = re.search(r'<pre id="browser-check">(.*?)</pre>', proc.stdout, re.S)
    assert m, f"the check script did not run; DOM starts: {proc.stdout[:500]!r}"
    found = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))

    assert [im["alt"] for im in found["imgs"]] == [p.title for p in rep.plots]
    assert len(found["imgs"]) == 4  # ladder, timing, sweep heatmap, roofline
    for im in found["imgs"]:
        assert im["complete"] and im["naturalWidth"] > 0 and im["shownWidth"] > 0, im
    assert all(s["width"] > 0 and s["height"] > 0 for s in found["svgs"])
    tables = found["tables"]
    assert tables[0]["cls"] == "ladder" and tables[0]["bodyRows"] == 6  # 5 kernels + cuBLAS
    assert all(t["bodyRows"] > 0 and t["visible"] for t in tables if t["cls"] != "evidence"), tables
    assert found["cards"] == len(rep.cards) == 6


def test_screenshot_renders_the_page(chromium, report_page, tmp_path):
    page, _ = report_page
    shot = tmp_path / "shot.png"
    proc = run_browser(chromium, tmp_path / "profile", "--hide-scrollbars", "--window-size=1200,2400",
                       f"--screenshot={shot}", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    assert (width, height) == (1200, 2400)
    # a blank 1200x2400 page compresses to a few KB; tables and four plots make it much larger
    assert len(data) > 100_000, len(data)


def test_lesson_page_tables_render_with_rows(chromium, tmp_path):
    """The lessons page (two GPUs side by side, the article's table, one GPU only) in a real browser."""
    from lesson_samples import fake_run

    from gemmlab.report import lesson_html

    tiling = {("naive", 1024): 1.0e-3, ("tiled", 1024): 1.15e-3, ("cublas", 1024): 0.06e-3}
    a = [fake_run("tiling", "GPU A", tiling), fake_run("fusion", "GPU A", {("two_kernels", 4096): 4e-6, ("fused", 4096): 2e-6})]
    b = [fake_run("tiling", "GPU B", {k: v * 0.9 for k, v in tiling.items()}, seed=5)]
    checked = tmp_path / "lessons.html"
    checked.write_text(lesson_html.render(a, b, note="SAMPLE DATA").replace("</body>", CHECK_SCRIPT + "</body>"), encoding="utf-8")
    proc = run_browser(chromium, tmp_path / "profile", "--dump-dom", checked.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = re.search(r'<pre id="browser-check">(.*?)</pre>', proc.stdout, re.S)
    assert m, f"the check script did not run; DOM starts: {proc.stdout[:500]!r}"
    found = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    classes = [t["cls"] for t in found["tables"]]
    assert classes == ["article", "lesson-compare", "lesson-steps", "lesson-run", "lesson-verdicts"]
    assert all(t["bodyRows"] > 0 and t["visible"] for t in found["tables"]), found["tables"]
