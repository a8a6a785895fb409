"""BrowserTool: drive a real headless Chromium with Playwright (`pip install "agentica-cli[browser]"`).

Playwright's own browser download does not work everywhere (offline machines, CI without it), so
the tool uses a system Chromium: `executable_path=`, else $AGENTICA_CHROMIUM, else the first of
chromium / chromium-browser / google-chrome(-stable) on PATH, else Playwright's bundled browser.
On Debian/Ubuntu: `apt-get install chromium`.

Navigations (the page asked for, redirects, links clicked) follow the fetch_url SSRF rules:
public addresses only unless `allow_private` allows more.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urljoin

from agentica_cli.toolkits._http import ToolkitError, require_module, url_guard
from agentica_cli.toolkits._text import clip
from agentica_cli.tools.base import Tool
from agentica_cli.tools.context import ToolContext

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
MAX_CONTROLS = 40
MAX_REDIRECTS = 5

# Visible form controls, buttons and links, each with a selector the model can use next.
_CONTROLS_JS = """(max) => {
  const out = [];
  const cssq = (v) => v.replace(/"/g, '\\\\"');
  for (const el of document.querySelectorAll('input,textarea,select,button,a[href],[role=button]')) {
    if (out.length >= max) break;
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || el.type === 'hidden') continue;
    const tag = el.tagName.toLowerCase();
    let sel = el.id ? '#' + CSS.escape(el.id) : el.name ? `${tag}[name="${cssq(el.name)}"]` : '';
    const label = (el.innerText || el.value || el.placeholder || el.getAttribute('aria-label') || '').trim()
      .replace(/\\s+/g, ' ').slice(0, 40);
    if (!sel) sel = label ? `${tag}:has-text("${cssq(label)}")` : tag;
    const kind = tag === 'input' ? `input[${el.type}]` : tag;
    out.push(`${sel}  ${kind}${label ? ' "' + label + '"' : ''}`);
  }
  return out;
}"""


def find_chromium(explicit: str | None = None) -> str | None:
    """The browser executable to use, or None for Playwright's own."""
    if explicit:
        return explicit
    from_env = os.environ.get("AGENTICA_CHROMIUM", "").strip()
    if from_env:
        return from_env
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserTool(Tool):
    """A headless browser: open pages, click, type, read text, screenshots."""

    extra = "browser"
    extra_modules = ("playwright",)

    def __init__(
        self,
        *,
        executable_path: str | None = None,
        headless: bool = True,
        output_dir: str | Path | None = None,
        max_chars: int = 20_000,
        timeout: float = 30.0,
        allow_private: bool | list[str] | tuple[str, ...] = False,
        viewport: tuple[int, int] = (1280, 800),
        launch_args: list[str] | None = None,
    ):
        super().__init__(name="browser")
        self.executable_path = executable_path
        self.headless = headless
        self.output_dir = Path(output_dir) if output_dir else None
        self.max_chars = max(1000, int(max_chars))
        self.timeout_ms = int(timeout * 1000)
        self.guard = url_guard(allow_private)
        self.viewport = viewport
        self.launch_args = list(launch_args or [])
        self._playwright: Any = None
        self._browser: Any = None
        self._page: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.register(self.browser_open)
        self.register(self.browser_act)
        self.register(self.browser_read, is_read_only=True)
        self.register(self.browser_screenshot)
        self.register(self.browser_eval)

    # -- lifecycle ------------------------------------------------------------------------

    async def _page_or_start(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._page is not None and self._loop is loop and not self._page.is_closed():
            return self._page
        if self._loop is not loop:  # objects of another (finished) event loop cannot be used
            self._playwright = self._browser = self._page = None
        await self.close()
        require_module("playwright", extra="browser", toolkit="BrowserTool")
        from playwright.async_api import async_playwright

        executable = find_chromium(self.executable_path)
        args = ["--disable-dev-shm-usage", *self.launch_args]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox on
        self._playwright = await async_playwright().start()
        try:
            self._browser = await self._playwright.chromium.launch(
                executable_path=executable, headless=self.headless, args=args, timeout=self.timeout_ms)
        except Exception as err:
            await self.close()
            where = executable or "Playwright's bundled Chromium"
            raise ToolkitError(
                f"could not start the browser ({where}): {str(err).splitlines()[0][:300]}. Install Chromium "
                "(Debian/Ubuntu: apt-get install chromium) or set AGENTICA_CHROMIUM / executable_path= to a "
                "Chromium or Chrome executable."
            ) from None
        context = await self._browser.new_context(viewport={"width": self.viewport[0], "height": self.viewport[1]})
        await context.route("**/*", self._vet_request)
        self._page = await context.new_page()
        self._page.set_default_timeout(self.timeout_ms)
        self._loop = loop
        return self._page

    async def _vet_request(self, route: Any, request: Any) -> None:
        # Only navigations are vetted: sub-resources of an allowed page load as in any browser.
        if not (request.is_navigation_request() and request.url.startswith(("http://", "https://"))):
            await route.continue_()
            return
        try:
            await self.guard.check(request.url)
        except Exception as err:
            self._refused = str(err)
            await route.abort("blockedbyclient")
            return
        # Redirects the browser follows do not come back through this handler, so the chain is
        # walked here first (each Location vetted), then the first answer is handed to the page.
        try:
            response = hop = await route.fetch(max_redirects=0)
            current = request.url
            for _ in range(MAX_REDIRECTS):
                if hop.status not in (301, 302, 303, 307, 308) or not hop.headers.get("location"):
                    break
                current = urljoin(current, hop.headers["location"])
                await self.guard.check(current)
                hop = await route.fetch(url=current, max_redirects=0)
        except Exception as err:
            self._refused = str(err)
            await route.abort("blockedbyclient")
            return
        await route.fulfill(response=response)

    async def close(self) -> None:
        """Close the browser (the tool starts a new one on its next call)."""
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = self._page = None
        for closer in (getattr(browser, "close", None), getattr(playwright, "stop", None)):
            if closer is not None:
                try:
                    await closer()
                except Exception:
                    pass

    # -- functions -------------------------------------------------------------------------

    async def browser_open(self, url: str) -> str:
        """Open a URL; returns its title, text start and controls with selectors."""
        await self.guard.check(url)  # a clear refusal before the browser starts
        page = await self._page_or_start()
        self._refused = ""
        try:
            response = await page.goto(url, wait_until="domcontentloaded")
        except Exception as err:
            raise ToolkitError(self._refused or f"could not open {url}: {str(err).splitlines()[0][:300]}") from None
        status = f" (HTTP {response.status})" if response is not None and response.status >= 400 else ""
        return await self._summary(page, status)

    async def browser_act(
        self,
        action: Literal["click", "type", "select", "press", "scroll", "wait"],
        selector: str = "",
        text: str = "",
    ) -> str:
        """Act on the open page.

        Args:
            selector: CSS/Playwright selector, e.g. "#email".
            text: Text to type/select, key (Enter), up/down, or ms to wait.
        """
        page = await self._current()
        self._refused = ""
        try:
            if action == "click":
                await page.click(_need(selector, action))
            elif action == "type":
                await page.fill(_need(selector, action), text)
            elif action == "select":
                await page.select_option(_need(selector, action), text)  # by value or label
            elif action == "press":
                await (page.press(selector, text or "Enter") if selector else page.keyboard.press(text or "Enter"))
            elif action == "scroll":
                await page.mouse.wheel(0, -800 if text.strip().lower() == "up" else 800)
            elif action == "wait":
                if selector:
                    await page.wait_for_selector(selector)
                else:
                    await page.wait_for_timeout(max(0, min(int(text or 1000), 30_000)))
            await page.wait_for_load_state("domcontentloaded")
        except ToolkitError:
            raise
        except Exception as err:
            if self._refused:
                raise ToolkitError(self._refused) from None
            raise ToolkitError(f"{action} {selector!r} failed: {str(err).splitlines()[0][:300]}") from None
        return f"Done: {action} {selector}".rstrip() + f". Now at {page.url} ({await page.title()!r})."

    async def browser_read(self, format: Literal["markdown", "text"] = "markdown") -> str:
        """The open page's content as Markdown or plain text."""
        page = await self._current()
        if format == "text":
            body = await page.inner_text("body")
        else:
            from agentica_cli.tools.web_access import html_to_markdown

            body = html_to_markdown(await page.content())
        return f"URL: {page.url}\nTitle: {await page.title()}\n\n" + clip(body.strip(), self.max_chars)

    async def browser_screenshot(self, path: str = "screenshot.png", full_page: bool = False, *,
                                 tool_context: ToolContext) -> str:
        """Save a PNG screenshot of the open page in the work folder.

        Args:
            path: .png file name.
        """
        page = await self._current()
        folder = (self.output_dir or Path(getattr(getattr(tool_context, "agent", None), "work_dir", None) or "."))
        folder = folder.resolve()
        target = (folder / path).resolve()
        if not target.is_relative_to(folder):
            raise ValueError(f"{path!r} is outside the work folder {folder}.")
        if target.suffix.lower() != ".png":
            raise ValueError("the screenshot file name must end in .png.")
        target.parent.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(target), full_page=full_page)
        return f"Saved {target} ({target.stat().st_size:,} bytes)."

    async def browser_eval(self, expression: str) -> str:
        """Evaluate a JavaScript expression in the page; returns JSON."""
        page = await self._current()
        try:
            value = await page.evaluate(expression)
        except Exception as err:
            raise ToolkitError(f"the script failed: {str(err).splitlines()[0][:300]}") from None
        return clip(json.dumps(value, ensure_ascii=False, default=str), self.max_chars)

    async def _current(self) -> Any:
        if self._page is None or self._loop is not asyncio.get_running_loop() or self._page.is_closed():
            raise ToolkitError("no page is open; call browser_open(url) first.")
        return self._page

    async def _summary(self, page: Any, status: str = "") -> str:
        text = " ".join((await page.inner_text("body")).split())
        controls = await page.evaluate(_CONTROLS_JS, MAX_CONTROLS)
        lines = [f"Opened {page.url}{status}: {await page.title()!r}", clip(text, 1500, "browser_read for all")]
        if controls:
            lines.append("Controls (selector, kind, label):")
            lines += [f"  {c}" for c in controls]
        return "\n".join(lines)

    _refused = ""


def _need(selector: str, action: str) -> str:
    if not selector.strip():
        raise ValueError(f"{action} needs a selector.")
    return selector
