"""Images in the conversation: prompt images, read_file of an image, MCP image content, the
CLI's --image and the REPL's @image, all checked in the scripted model server's request log."""

from __future__ import annotations

import base64
import io
import os
import re
import sys
from pathlib import Path

import pexpect
import pytest
from cli_support import model_args, run_cli
from conftest import scripted_model
from mcp_servers.support import demo_command
from screen_support import spawn_agentica

from agentica_cli import Agent
from agentica_cli.images import ImageError, image_tokens, load, prepare, supports_vision
from agentica_cli.testing import ScriptedModelServer, turns
from builtin_tools import get_builtin_tools

PIL = pytest.importorskip("PIL.Image", reason="Pillow (the images extra) is needed to render test images")


def png(width: int, height: int, colour: str = "red") -> bytes:
    out = io.BytesIO()
    PIL.new("RGB", (width, height), colour).save(out, "PNG")
    return out.getvalue()


def image_parts(message: dict) -> list[dict]:
    content = message.get("content")
    return [p for p in content if p.get("type") == "image_url"] if isinstance(content, list) else []


def decoded(part: dict) -> tuple[str, bytes]:
    header, _, data = part["image_url"]["url"].partition(",")
    return header, base64.b64decode(data)


def test_prepare_keeps_a_small_image_and_scales_a_large_one() -> None:
    small = png(64, 32)
    image = prepare(small, "small.png")
    assert (image.data, image.width, image.height, image.mime) == (small, 64, 32, "image/png")
    big = prepare(png(2560, 640), "big.png")
    assert (big.width, big.height) == (2048, 512)
    assert "scaled from 2560x640" in big.describe()
    assert PIL.open(io.BytesIO(big.data)).size == (2048, 512)
    # too many bytes for the limit: re-encoded as JPEG until it fits
    noisy = PIL.effect_noise((600, 600), 100).convert("RGB")
    out = io.BytesIO()
    noisy.save(out, "PNG")
    fitted = prepare(out.getvalue(), "noise.png", max_bytes=60_000)
    assert fitted.mime == "image/jpeg" and len(fitted.data) <= 60_000
    with pytest.raises(ImageError, match="not a PNG, JPEG, GIF or WebP"):
        prepare(b"plain text", "notes.txt")


def test_token_estimate_follows_the_tile_rule() -> None:
    assert image_tokens(1024, 1024) == 170 * 4 + 85  # shortest side to 768 -> 2x2 tiles
    assert image_tokens(512, 512) == 170 + 85  # never scaled up
    assert image_tokens(1920, 1080) == 170 * 6 + 85  # 1365x768 -> 3x2 tiles
    assert image_tokens(100, 100) == 170 + 85


def test_vision_support_is_declared_or_guessed_from_the_model_id() -> None:
    class Model:
        def __init__(self, id: str, vision: bool | None = None):
            self.id, self.vision = id, vision

    assert supports_vision(Model("gpt-4o-mini")) and supports_vision(Model("glm-4.5v"))
    assert supports_vision(Model("qwen2.5-vl-72b-instruct"))
    assert not supports_vision(Model("deepseek-chat"))
    assert supports_vision(Model("my-local-model", vision=True))
    assert not supports_vision(Model("gpt-4o", vision=False))


def test_prompt_images_go_as_image_url_parts(scripted, tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png(40, 20))
    server = scripted(turns.text("A red rectangle."))
    model = scripted_model(server)
    model.vision = True
    result = Agent(model).run_sync("what is this?", images=[tmp_path / "shot.png"])
    assert result.content == "A red rectangle."
    message = server.requests[0]["messages"][-1]
    assert message["content"][0] == {"type": "text", "text": "what is this?"}
    [part] = image_parts(message)
    header, data = decoded(part)
    assert header == "data:image/png;base64" and data == (tmp_path / "shot.png").read_bytes()


def test_read_file_of_an_image_shows_it_to_a_vision_model(scripted, tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(png(2560, 1280, "blue"))
    server = scripted(turns.tool_calls(turns.call("read_file", {"file_path": "big.png"}, id="r1")),
                      turns.text("Blue."))
    model = scripted_model(server)
    model.vision = True
    agent = Agent(model, tools=get_builtin_tools(tmp_path, exclude=["task"]))
    assert agent.run_sync("look at big.png").content == "Blue."
    messages = server.requests[1]["messages"]
    tool = next(m for m in messages if m["role"] == "tool")
    assert tool["content"].startswith("Image big.png: 2048x1024 PNG")
    follow = messages[messages.index(tool) + 1]
    assert follow["role"] == "user"
    assert follow["content"][0]["text"] == "[image(s) returned by read_file (call r1)]"
    [part] = image_parts(follow)
    _, data = decoded(part)
    assert PIL.open(io.BytesIO(data)).size == (2048, 1024)  # fitted to the providers' limit


def test_read_file_of_an_image_for_a_text_model_says_so(scripted, tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png(10, 10))
    server = scripted(turns.tool_calls(turns.call("read_file", {"file_path": "shot.png"}, id="r1")),
                      turns.text("ok"))
    agent = Agent(scripted_model(server), tools=get_builtin_tools(tmp_path, exclude=["task"]))
    agent.run_sync("look")
    messages = server.requests[1]["messages"]
    tool = next(m for m in messages if m["role"] == "tool")
    assert "1 image(s) not shown: the model 'scripted-model' is not known to take images" in tool["content"]
    assert not any(image_parts(m) for m in messages)


def test_mcp_image_content_reaches_a_vision_model(scripted) -> None:
    from agentica_cli.tools.mcp import McpTool

    server = scripted(turns.tool_calls(turns.call("demo__picture", {}, id="s1")), turns.text("A pixel."))
    model = scripted_model(server)
    model.vision = True
    mcp = McpTool(demo_command(), name="demo")
    agent = Agent(model, tools=[mcp])

    async def run() -> None:
        async with mcp:
            await agent.run("take a screenshot")

    import asyncio

    asyncio.run(run())
    messages = server.requests[1]["messages"]
    tool = next(m for m in messages if m["role"] == "tool")
    assert "a pixel" in tool["content"] and "[image: image/png" in tool["content"]
    [part] = image_parts(messages[messages.index(tool) + 1])
    _, data = decoded(part)
    assert PIL.open(io.BytesIO(data)).size == (1, 1)


def test_load_reports_a_missing_file() -> None:
    with pytest.raises(ImageError, match="cannot read image"):
        load("/nonexistent/shot.png")


# -- the CLI -------------------------------------------------------------------------------------


@pytest.fixture
def vision_home(home: Path) -> Path:
    (home / "config.toml").write_text("[model]\nvision = true\n")
    return home


def test_print_mode_image_flag_sends_the_image(vision_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "shot.png").write_bytes(png(30, 30, "green"))
    with ScriptedModelServer([turns.text("It is green.")]) as server:
        proc = run_cli(["-p", "what colour?", "--image", "shot.png", *model_args(server)], cwd=project,
                       home=vision_home)
        requests = server.requests
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "It is green.\n"
    assert "Sent with the prompt: shot.png: 30x30 PNG" in proc.stderr and "tokens" in proc.stderr
    [part] = image_parts(requests[0]["messages"][-1])
    assert decoded(part)[1] == (project / "shot.png").read_bytes()


def test_print_mode_bad_image_is_a_usage_error(vision_home: Path, tmp_path: Path) -> None:
    (tmp_path / "fake.png").write_text("not an image")
    proc = run_cli(["-p", "x", "--image", "fake.png", "--base-url", "http://127.0.0.1:9", "--api-key", "k"],
                   cwd=tmp_path, home=vision_home)
    assert proc.returncode == 2
    assert "--image: fake.png is not a PNG, JPEG, GIF or WebP image" in proc.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="Ctrl-V reads the clipboard with xclip here (X11)")
def test_repl_attaches_mentioned_pasted_and_clipboard_images(vision_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "shot.png").write_bytes(png(20, 10, "red"))
    (tmp_path / "my pic.png").write_bytes(png(12, 12, "blue"))
    clip = tmp_path / "clip.png"
    clip.write_bytes(png(9, 7, "yellow"))
    tools = tmp_path / "bin"
    tools.mkdir()
    fake_xclip = tools / "xclip"  # stands in for X11's clipboard: prints the image it holds
    fake_xclip.write_text(f"#!/bin/sh\nexec cat {clip}\n")
    fake_xclip.chmod(0o755)
    with ScriptedModelServer([turns.text("Two images."), turns.text("A yellow box.")]) as server:
        child = spawn_agentica(vision_home, project, model_args(server), columns=200, DISPLAY=":0",
                               PATH=f"{tools}:{os.environ['PATH']}", TMPDIR=str(tmp_path), WAYLAND_DISPLAY=None)
        try:
            child.expect("❯")
            pasted = str(tmp_path / "my pic.png").replace(" ", "\\ ")  # as a terminal pastes a dropped file
            child.send(f"compare @shot.png with {pasted}\r")
            child.expect(r"Sent with the prompt:\s+shot\.png:\s+20x10\s+PNG,\s+\d+\s+B,\s+~255\s+tokens;")
            child.expect("Two images.")
            child.expect("❯")
            child.send("what is this ")
            child.sendcontrol("v")  # the clipboard's image, saved, goes in as @path
            child.expect(r"clipboard-\d{8}-\d{6}\.png")
            child.send("\r")
            child.expect("A yellow box.")
            # rich wraps the long path (anywhere, even inside a name): read it with line breaks gone
            unwrapped = re.sub(r"[\r\n]", "", child.before)
            sent = r"Sent with the prompt:\s+\S*clipboard-\d{8}-\d{6}\.png:\s+9x7\s+PNG"
            assert re.search(sent, unwrapped), unwrapped
            child.expect("❯")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        first, second = (request["messages"][-1] for request in server.requests)
    assert first["content"][0]["text"] == f"compare @shot.png with {pasted}"
    assert [decoded(p)[1] for p in image_parts(first)] == [(project / "shot.png").read_bytes(),
                                                           (tmp_path / "my pic.png").read_bytes()]
    assert second["content"][0]["text"].startswith(f"what is this @{tmp_path}/agentica-clipboard/clipboard-")
    [part] = image_parts(second)
    assert decoded(part)[1] == clip.read_bytes()
