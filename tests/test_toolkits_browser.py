"""BrowserTool drives the system Chromium (Playwright) against a local page with a form:
open, type, select, click, read the result, screenshot, evaluate; private addresses refused."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from toolkit_support import LocalWeb, local_web

from agentica_cli.toolkits.browser import BrowserTool, find_chromium
from agentica_cli.tools.base import FunctionCall
from agentica_cli.tools.context import ToolContext

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="the browser test runs the Linux system Chromium"),
    pytest.mark.skipif(find_chromium() is None, reason="no system Chromium (apt-get install chromium)"),
]
pytest.importorskip("playwright", reason="playwright (the [browser] extra) is not installed")

FORM = """<!DOCTYPE html><html><head><title>Order form</title></head><body>
<h1>Order a drink</h1>
<form id="order" onsubmit="event.preventDefault();
  document.getElementById('result').textContent =
    'Thanks ' + document.getElementById('name').value + ', one ' + document.getElementById('size').value +
    ' coffee is on its way.';">
  <label>Name <input id="name" name="name" placeholder="Your name"></label>
  <select id="size" name="size"><option value="small">Small</option><option value="large">Large</option></select>
  <button type="submit">Order</button>
</form>
<p id="result"></p>
</body></html>"""


@pytest.fixture
def web():
    yield from local_web()


def test_browser_fills_a_form_reads_the_result_and_takes_a_screenshot(web: LocalWeb, tmp_path: Path) -> None:
    # One browser for the whole scenario: starting Chromium is the slow part.
    web.route("GET", "/form.html", FORM)
    elsewhere = web.url.replace("127.0.0.1", "127.0.0.2")  # not allowed; nothing listens there either
    web.route("GET", "/jump", b"", status=302, headers={"Location": f"{elsewhere}/secret"})
    tool = BrowserTool(allow_private=["127.0.0.1/32"], output_dir=tmp_path, timeout=20)

    async def call(name: str, **arguments: object) -> FunctionCall:
        return await FunctionCall(tool.functions[name], "c", json.dumps(arguments)).execute(ToolContext())

    async def scenario() -> dict[str, FunctionCall]:
        out = {}
        try:
            out["open"] = await call("browser_open", url=f"{web.url}/form.html")
            out["type"] = await call("browser_act", action="type", selector="#name", text="Ada")
            out["select"] = await call("browser_act", action="select", selector="#size", text="Large")
            out["click"] = await call("browser_act", action="click", selector="button:has-text('Order')")
            out["wait"] = await call("browser_act", action="wait", selector="#result:has-text('Thanks')")
            out["read"] = await call("browser_read", format="text")
            out["shot"] = await call("browser_screenshot", path="shots/order.png")
            out["eval"] = await call("browser_eval", expression="document.querySelectorAll('option').length")
            out["outside"] = await call("browser_screenshot", path="../outside.png")
            out["redirect"] = await call("browser_open", url=f"{web.url}/jump")
        finally:
            await tool.close()
        return out

    out = asyncio.run(scenario())
    for name in ("open", "type", "select", "click", "wait", "read", "shot", "eval"):
        assert out[name].error is None, (name, out[name].error)
    assert out["open"].result.startswith(f"Opened {web.url}/form.html: 'Order form'\nOrder a drink Name")
    controls = 'Controls (selector, kind, label):\n  #name  input[text] "Your name"\n  #size  select'
    assert controls in out["open"].result
    assert out["type"].result == f"Done: type #name. Now at {web.url}/form.html ('Order form')."
    assert "Thanks Ada, one large coffee is on its way." in out["read"].result
    shot = tmp_path / "shots" / "order.png"
    assert out["shot"].result.startswith(f"Saved {shot} (")
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert out["eval"].result == "2"
    assert out["outside"].error == (
        f"Error: ValueError: '../outside.png' is outside the work folder {tmp_path.resolve()}.")
    # The redirect's target is vetted before the browser follows it.
    assert out["redirect"].error is not None and out["redirect"].error.startswith(
        f"Error: ToolkitError: refusing to fetch {elsewhere}/secret: 127.0.0.2 resolves to 127.0.0.2")


def test_browser_refuses_a_private_address_before_starting(web: LocalWeb) -> None:
    web.route("GET", "/form.html", FORM)
    tool = BrowserTool()
    call = asyncio.run(FunctionCall(tool.functions["browser_open"], "a", {"url": f"{web.url}/form.html"}).execute())
    assert call.error is not None and call.error.startswith(
        f"Error: FetchRefusedError: refusing to fetch {web.url}/form.html: 127.0.0.1 resolves to 127.0.0.1")
    assert tool._browser is None and web.seen == []
    later = asyncio.run(FunctionCall(tool.functions["browser_read"], "b", {}).execute())
    assert later.error == "Error: ToolkitError: no page is open; call browser_open(url) first."
