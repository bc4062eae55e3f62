"""The report in a real browser: headless Chromium (the system's, never a download) opens the
HTML page built over two runs of different models, with no console error, no page error and
no request leaving the file; every section is there; Hebrew, Arabic and Chinese labels render
with real glyphs (no empty boxes) and right-to-left text is laid out right to left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.evaluator.report.test_report import ifm_run
from toolkit.cli import main

pytestmark = pytest.mark.integration

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
LOCALES = ("en", "zh", "he", "ar", "arz")

# Two distinct characters per script: missing glyphs would all be the same empty box. Drawn with
# the font stack the report gives its plots' text, and compared with a private-use code point no
# font has, drawn the same way.
GLYPH_CHECK = """
(samples) => {
  const text = document.querySelector("svg.figure text");
  const family = getComputedStyle(text).fontFamily;
  const canvas = document.createElement("canvas");
  canvas.width = 160; canvas.height = 64;
  const c = canvas.getContext("2d", { willReadFrequently: true });
  c.font = `40px ${family}`;
  const draw = (s) => {
    c.clearRect(0, 0, canvas.width, canvas.height);
    c.fillStyle = "#000"; c.textBaseline = "middle"; c.fillText(s, 8, 32);
    const alpha = c.getImageData(0, 0, canvas.width, canvas.height).data.filter((_, i) => i % 4 === 3);
    let hash = 0, ink = 0;
    for (const a of alpha) { hash = (hash * 31 + a) | 0; ink += a > 0 ? 1 : 0; }
    return { hash, ink };
  };
  const missing = "\\uE000";
  const out = { family };
  for (const [script, [a, b, word]] of Object.entries(samples)) {
    out[script] = {
      a: draw(a), b: draw(b), missing: draw(missing),
      width: c.measureText(word).width,
      missingWidth: c.measureText(missing.repeat([...word].length)).width,
    };
  }
  return out;
}
"""

# Right to left: in a Hebrew or Arabic run, the first character (in logical order) is drawn to
# the right of the last, in the HTML tables (<bdi>) and in the plots (SVG text).
RTL_CHECK = """
(words) => {
  const out = {};
  for (const word of words) {
    const bdi = [...document.querySelectorAll("bdi")].find((e) => e.textContent === word);
    const node = bdi.firstChild;
    const rect = (i) => { const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
                          return r.getBoundingClientRect(); };
    const svgText = [...document.querySelectorAll("svg.figure text")].find((e) => e.textContent.includes(word));
    const start = svgText.textContent.indexOf(word);
    out[word] = {
      htmlFirst: rect(0).left, htmlLast: rect(word.length - 1).left,
      svgFirst: svgText.getStartPositionOfChar(start).x,
      svgLast: svgText.getStartPositionOfChar(start + word.length - 1).x,
      svgLength: svgText.getComputedTextLength(),
    };
  }
  return out;
}
"""


def test_report_renders_in_chromium(tmp_path: Path) -> None:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `bash .ci/setup` (it installs chromium and the Noto fonts)")
    from playwright.sync_api import sync_playwright

    runs = [
        ifm_run(tmp_path / "runs" / "a", "org/model-A", LOCALES),
        ifm_run(tmp_path / "runs" / "b", "org/model-B", LOCALES, shift=1),
    ]
    out = tmp_path / "report"
    assert main(["eval", "report", *(str(r) for r in runs), "--out", str(out)]) == 0
    page_url = (out / "report.html").resolve().as_uri()

    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on(
                "console",
                lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
            )
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_url, wait_until="load")
            page.evaluate("document.fonts.ready.then(() => true)")
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)

            for anchor in ("runs", "ifm", "ifm-r1-model-a", "ifm-r2-model-b", "ifm-compare"):
                section = page.locator(f"section#{anchor}")
                assert section.count() == 1 and section.is_visible(), f"section {anchor} missing"
            figures = page.locator("figure svg.figure")
            assert figures.count() >= 3
            for i in range(figures.count()):
                box = figures.nth(i).bounding_box()
                assert box is not None and box["width"] > 200 and box["height"] > 100, i

            glyphs: dict[str, Any] = page.evaluate(
                GLYPH_CHECK,
                {"zh": ["中", "文", "简体中文"], "he": ["א", "ב", "עברית"], "ar": ["ع", "ب", "العربية"]},
            )
            assert "Noto Sans" in glyphs["family"]
            for script in ("zh", "he", "ar"):
                g = glyphs[script]
                assert g["a"]["ink"] > 20 and g["b"]["ink"] > 20, (script, g)
                assert g["a"]["hash"] != g["b"]["hash"], f"{script}: two characters draw the same box"
                assert g["missing"]["hash"] not in (g["a"]["hash"], g["b"]["hash"]), script
                assert abs(g["width"] - g["missingWidth"]) > 1.0, (script, g)

            rtl: dict[str, Any] = page.evaluate(RTL_CHECK, ["עברית", "العربية الفصحى"])
            for word, r in rtl.items():
                assert r["htmlFirst"] > r["htmlLast"], (word, r)
                assert r["svgFirst"] > r["svgLast"], (word, r)
                assert r["svgLength"] > 0, word
        finally:
            browser.close()
    assert not problems, problems
    assert all(url.startswith("file://") for url in requests), requests
    assert (tmp_path / "report.png").stat().st_size > 10_000
