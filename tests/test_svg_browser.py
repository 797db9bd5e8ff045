"""The demo's SVG as a browser draws it (real headless Chromium): it scales to its window, and no two of
its labels overlap — measured on the rendered text boxes, in English and in Spanish."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import BrowserContext

from bridge.demo import picture, play
from tests.log.test_pages_browser import ARTIFACTS, browser  # noqa: F401  (the browser fixture)


@pytest.fixture(scope="module")
def demo_svgs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo played through a real bridge, its picture written in English and Spanish."""
    out = tmp_path_factory.mktemp("demo-svg")
    paths = {}
    for locale in ("en", "es"):
        played = asyncio.run(play(locale))
        paths[locale] = out / f"demo-{locale}.svg"
        paths[locale].write_text(picture(played, locale), encoding="utf-8")
    return paths


_OVERLAPS = """() => {
    const boxes = [...document.querySelectorAll('text')].map((t) => {
        const b = t.getBBox();
        return { text: t.textContent, x0: b.x, y0: b.y, x1: b.x + b.width, y1: b.y + b.height };
    });
    const hits = [];
    for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
            const a = boxes[i], b = boxes[j];
            if (a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) hits.push(`${a.text} / ${b.text}`);
        }
    }
    return { count: boxes.length, hits };
}"""


@pytest.mark.parametrize("locale", ["en", "es"])
@pytest.mark.parametrize("width", [1400, 400])
async def test_demo_svg_scales_to_its_window_and_its_labels_do_not_overlap(
    demo_svgs: dict[str, Path],
    browser: BrowserContext,  # noqa: F811
    locale: str,
    width: int,
) -> None:
    """The demo SVG is drawn as large as a 1400 or 400 px window allows, and its labels never overlap.

    The whole picture keeps its proportions, with no sideways scroll; the boxes of its texts — zone, token and line
    labels, legend — never meet.
    """
    page = await browser.new_page()
    await page.set_viewport_size({"width": width, "height": 900})
    await page.goto(demo_svgs[locale].as_uri())
    size = await page.evaluate(
        "(() => { const svg = document.documentElement, m = svg.getScreenCTM(), v = svg.viewBox.baseVal;"
        " return { width: v.width * m.a, height: v.height * m.d, scroll: svg.scrollWidth } })()"
    )
    # The whole drawing in the window, as large as the window allows, never wider than it.
    assert size["width"] <= width + 1 and size["height"] <= 900 + 1, size
    assert abs(size["width"] - width) <= 1 or abs(size["height"] - 900) <= 1, size
    assert size["scroll"] <= width
    found = await page.evaluate(_OVERLAPS)
    assert found["count"] > 20  # title, scale, zone, token and line labels, legend
    assert found["hits"] == []
    if width == 400 and locale == "en":
        ARTIFACTS.mkdir(exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / "demo-svg-400.png"))
