#!/usr/bin/env python3
"""The log pages' pictures in docs/img, from a real session: the demo's.

Plays ``sightline demo --keep-log DIR`` (a real bridge, the demo's 13 rulings logged into one game
session), in English and again in Spanish (``--locale es``: the notes and the scene's names are the
bridge's Spanish), serves each log on a free local port and photographs its session page in headless Chromium
(Debian's ``/usr/bin/chromium``, driven by Playwright) with the row of ruling 5 selected (a sight line
through the smoke, with its tokens on the map):

- ``log-session.png``: 1400 px wide, English, the whole page;
- ``log-session-400.png``: 400 px wide (a phone), English, the screen as the reader sees it;
- ``log-session-es.png``: 1400 px wide, the Spanish demo's session in Spanish, the screen after
  scrolling down the table (the map stays in view).

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
from bridge.log.store import LogStore, open_store

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
#: The demo's ruling whose row is selected (1-based, as the demo numbers them).
SELECTED = 5


def play_demo(log_dir: Path, locale: str) -> None:
    """``sightline demo --keep-log log_dir --locale locale``, through the console entry point's module."""
    command = [sys.executable, "-m", "bridge", "demo", "--keep-log", str(log_dir), "--locale", locale]
    command += ["--svg", str(log_dir / "demo.svg")]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=log_dir)


async def sign_in(page: Page, url: str, secret: str) -> None:
    await page.goto(url.split("/log/")[0] + "/log/login?lang=en")
    await page.fill("input[name=secret]", secret)
    await page.click("button[type=submit]")
    await page.wait_for_load_state()


async def select_row(page: Page) -> None:
    row = page.locator("#rulings tbody tr.ruling").nth(SELECTED - 1)
    await row.click()
    await page.wait_for_selector("#map line.sight", state="attached")
    await page.wait_for_selector("#map g.tokens g.token")
    await page.mouse.move(0, 0)


async def serve(log_dir: Path, secret: str) -> tuple[web.AppRunner, LogStore, str]:
    """The log kept in ``log_dir`` on a free local port; the address of its one session's page."""
    store = await open_store(None, log_dir)
    runner = web.AppRunner(create_log_app(check_secret=lambda _world, given: given == secret, store=store))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    (world,) = await store.list_worlds()
    (session,) = await store.list_sessions(world)
    return runner, store, f"http://127.0.0.1:{port}/log/{world}/{session.id}"


async def photograph(english: Path, spanish: Path, out: Path) -> list[Path]:
    secret = secrets.token_urlsafe(16)
    runner, store, url = await serve(english, secret)
    runner_es, store_es, url_es = await serve(spanish, secret)
    written: list[Path] = []
    try:
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
                await sign_in(page, url, secret)
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
                await sign_in(page, url_es, secret)  # one cookie per host, whatever the port: sign in again
                await page.goto(url_es + "?lang=es")
                await select_row(page)
                await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
                written.append(out / "log-session-es.png")
                await page.screenshot(path=str(written[-1]))
                await context.close()
    finally:
        for running, opened in ((runner, store), (runner_es, store_es)):
            await running.cleanup()
            await opened.close()
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="where the pictures go")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        english, spanish = Path(scratch) / "en", Path(scratch) / "es"
        for log_dir, locale in ((english, "en"), (spanish, "es")):
            log_dir.mkdir()
            play_demo(log_dir, locale)
        for path in asyncio.run(photograph(english, spanish, args.out)):
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
