#!/usr/bin/env python3
"""The log pages' pictures in docs/img, from a real session: the demo's.

Plays ``sightline demo --keep-log DIR`` (a real bridge, the demo's 13 rulings logged into one game
session), serves that log on a free local port and photographs its session page in headless Chromium
(Debian's ``/usr/bin/chromium``, driven by Playwright) with the row of ruling 5 selected (a sight line
through the smoke, with its tokens on the map):

- ``log-session.png``: 1400 px wide, English, the whole page;
- ``log-session-400.png``: 400 px wide (a phone), English, the screen as the reader sees it;
- ``log-session-es.png``: 1400 px wide, Spanish, the screen after scrolling down the table (the map
  stays in view).

Run it again whenever the pages change:

    .venv/bin/python scripts/log_screenshots.py            # into docs/img/
    .venv/bin/python scripts/log_screenshots.py --out DIR  # elsewhere
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from aiohttp import web
from playwright.async_api import Page, async_playwright

from bridge.log.http import create_log_app
from bridge.log.store import open_store

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
#: The demo's ruling whose row is selected (1-based, as the demo numbers them).
SELECTED = 5


def play_demo(log_dir: Path) -> None:
    """``sightline demo --keep-log log_dir``, through the console entry point's module."""
    command = [sys.executable, "-m", "bridge", "demo", "--keep-log", str(log_dir), "--svg", str(log_dir / "demo.svg")]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=log_dir)


async def select_row(page: Page) -> None:
    row = page.locator("#rulings tbody tr.ruling").nth(SELECTED - 1)
    await row.click()
    await page.wait_for_selector("#map line.sight", state="attached")
    await page.wait_for_selector("#map g.tokens g.token")
    await page.mouse.move(0, 0)


async def photograph(log_dir: Path, out: Path) -> list[Path]:
    secret = secrets.token_urlsafe(16)
    store = await open_store(None, log_dir)
    app = create_log_app(check_secret=lambda _world, given: given == secret, store=store)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    written: list[Path] = []
    try:
        (world,) = await store.list_worlds()
        (session,) = await store.list_sessions(world)
        url = f"http://127.0.0.1:{port}/log/{world}/{session.id}"
        async with async_playwright() as playwright:
            with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
                context = await playwright.chromium.launch_persistent_context(
                    profile,
                    executable_path=CHROMIUM,
                    headless=True,
                    args=FLAGS,
                    viewport={"width": 1400, "height": 900},
                    locale="en-GB",
                    timezone_id="Europe/Madrid",
                )
                page = await context.new_page()
                await page.goto(f"http://127.0.0.1:{port}/log/login?lang=en")
                await page.fill("input[name=secret]", secret)
                await page.click("button[type=submit]")
                await page.goto(url + "?lang=en")
                await select_row(page)
                written.append(out / "log-session.png")
                await page.screenshot(path=str(written[-1]), full_page=True)

                await page.set_viewport_size({"width": 400, "height": 860})
                await page.goto(url + "?lang=en")
                await select_row(page)
                await page.locator(".map-pane").scroll_into_view_if_needed()
                await page.evaluate("window.scrollTo(0, document.querySelector('.map-pane').offsetTop - 8)")
                written.append(out / "log-session-400.png")
                await page.screenshot(path=str(written[-1]))

                await page.set_viewport_size({"width": 1400, "height": 900})
                await page.goto(url + "?lang=es")
                await select_row(page)
                await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
                written.append(out / "log-session-es.png")
                await page.screenshot(path=str(written[-1]))
                await context.close()
    finally:
        await runner.cleanup()
        await store.close()
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="where the pictures go")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        log_dir = Path(scratch)
        play_demo(log_dir)
        for path in asyncio.run(photograph(log_dir, args.out)):
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
