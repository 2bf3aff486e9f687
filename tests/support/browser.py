"""Report pages in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright;
no browser download): what a page loaded, logged and drew. The tests of tests/report use
it, and so does docs/report.png (``make screenshot``: ``python tests/support/browser.py
docs/report.png``), so that the picture in the docs is what the tests look at.
"""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = Path(os.environ.get("L3FWD_SIM_CHROMIUM", "/usr/bin/chromium"))
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1100, "height": 900}


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[test]')"
    if not CHROMIUM.is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set L3FWD_SIM_CHROMIUM)"
    return None


def launch(playwright):
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)


# Per Bokeh figure of the page: its chart name (data-chart), size on the page, and the
# pixels of its canvas (all layers composed) that are not white, and their colours.
FIGURES_JS = """() => [...Bokeh.index].filter(v => v.model.type === "Figure").map(v => {
    const canvas = v.canvas_view.compose().canvas;
    const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    const colours = new Set();
    let inked = 0;
    for (let i = 0; i < pixels.length; i += 4) {
        const rgb = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
        colours.add(rgb);
        if (pixels[i + 3] && rgb !== 0xffffff) inked++;
    }
    const box = v.el.getBoundingClientRect();
    return {chart: v.el.closest("[data-chart]")?.dataset.chart, width: box.width, height: box.height,
            inked: inked, colours: colours.size};
})"""

# Every element with a data-value: its data-* attributes and its text.
VALUES_JS = """() => [...document.querySelectorAll("[data-value]")].map(e => ({...e.dataset, text: e.textContent}))"""


@dataclass
class Loaded:
    """What opening a report did."""
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)      # console errors and uncaught exceptions
    dialogs: list[str] = field(default_factory=list)     # alert(), confirm(), ...: a script of an input ran
    declared: int = 0                                    # figures the page says it has (body data-figures)
    figures: list[dict] = field(default_factory=list)
    values: list[dict] = field(default_factory=list)
    screenshot: bytes = b""


def open_report(browser, path: Path, full_page: bool = True, keep_open=None) -> Loaded:
    """Load ``path``, wait until Bokeh has drawn every figure, and take what was seen;
    ``keep_open(page)`` may look further before the page is closed."""
    seen = Loaded()
    page = browser.new_page(viewport=VIEWPORT)
    try:
        page.on("request", lambda request: seen.requests.append(request.url))
        page.on("console", lambda message: message.type == "error" and seen.errors.append(message.text))
        page.on("pageerror", lambda error: seen.errors.append(str(error)))
        page.on("dialog", lambda dialog: (seen.dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(path.resolve().as_uri())
        seen.declared = int(page.get_attribute("body", "data-figures"))
        if seen.declared:
            page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].is_idle",
                                   timeout=15_000)
            seen.figures = page.evaluate(FIGURES_JS)
        seen.values = page.evaluate(VALUES_JS)
        seen.screenshot = page.screenshot(full_page=full_page)
        if keep_open:
            keep_open(page)
    finally:
        page.close()
    return seen


def screenshot_stats(png: bytes) -> tuple[int, float]:
    """(distinct colours, share of pixels that are not the white background)."""
    from PIL import Image
    image = Image.open(io.BytesIO(png)).convert("RGB")
    histogram = image.getcolors(maxcolors=1 << 24)
    white = next((n for n, colour in histogram if colour == (255, 255, 255)), 0)
    return len(histogram), 1 - white / (image.width * image.height)


DOCS_HEIGHT = 1480         # docs/report.png: the page down to the destination matrix


def docs_screenshot(target: Path) -> None:
    """docs/report.png: the top of the report of the shipped pcaps forwarded by two
    lcores, made in a scratch directory so that the page names ``pcaps/`` and ``out/`` as
    the docs do."""
    from PIL import Image
    from playwright.sync_api import sync_playwright
    repo = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copytree(repo / "pcaps", Path(scratch) / "pcaps")
        subprocess.run([Path(sys.executable).parent / "l3fwd-sim", "run", "pcaps", "-o", "out", "--quiet", "--report",
                        "--config", "(0,0,0),(1,0,1),(2,0,0),(3,0,1)"], cwd=scratch, check=True)
        with sync_playwright() as playwright:
            browser = launch(playwright)
            seen = open_report(browser, Path(scratch) / "out" / "report.html", full_page=True)
            browser.close()
    if seen.errors or seen.dialogs or len(seen.figures) != seen.declared:
        raise SystemExit(f"the report did not render cleanly: {seen.errors or seen.dialogs}")
    Image.open(io.BytesIO(seen.screenshot)).crop((0, 0, VIEWPORT["width"], DOCS_HEIGHT)).save(target, optimize=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python tests/support/browser.py docs/report.png")
    if why := missing():
        raise SystemExit(why)
    docs_screenshot(Path(sys.argv[1]))
