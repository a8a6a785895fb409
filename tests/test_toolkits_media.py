"""DalleTool, CogViewTool, ImageAnalysisTool and OcrTool against local servers and real images."""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import io
import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import scripted_model

from agentica_cli import Agent, CogViewTool, DalleTool, ImageAnalysisTool, OcrTool
from agentica_cli.testing import turns

PIL = pytest.importorskip("PIL.Image", reason="Pillow (the images extra) is needed to render test images")


def png(width: int = 16, height: int = 16, colour: str = "purple") -> bytes:
    out = io.BytesIO()
    PIL.new("RGB", (width, height), colour).save(out, "PNG")
    return out.getvalue()


class ImagesServer:
    """A 127.0.0.1 server speaking the images API: POST .../images/generations answers with
    base64 or with a URL on this server, which GET then serves."""

    def __init__(self, mode: str, status: int = 200):
        self.mode, self.status = mode, status
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.image = png()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if owner.status != 200:
                    return self._send(owner.status, json.dumps({"error": {"message": "quota exceeded"}}).encode())
                if owner.mode == "b64":
                    item = {"b64_json": base64.b64encode(owner.image).decode(), "revised_prompt": "a purple square"}
                else:
                    item = {"url": f"http://127.0.0.1:{self.server.server_address[1]}/files/out.png"}
                self._send(200, json.dumps({"created": 1, "data": [item]}).encode())

            def do_GET(self) -> None:
                self._send(200, owner.image, "image/png") if self.path == "/files/out.png" else self._send(404, b"")

            def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def images_server() -> Iterator[Any]:
    servers: list[ImagesServer] = []

    def start(mode: str, status: int = 200) -> ImagesServer:
        servers.append(ImagesServer(mode, status))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_dalle_saves_a_base64_image(images_server, tmp_path: Path) -> None:
    server = images_server("b64")
    tool = DalleTool(output_dir=tmp_path / "out", api_key="sk-test", base_url=server.base_url + "/v1")
    lines = asyncio.run(tool.create_image("a purple square")).splitlines()
    saved = Path(lines[0])
    assert saved.parent == tmp_path / "out" and saved.suffix == ".png"
    assert saved.read_bytes() == server.image
    assert lines[1] == "  revised prompt: a purple square"
    path, headers, body = server.requests[0]
    assert path == "/v1/images/generations" and headers["authorization"] == "Bearer sk-test"
    assert body == {"model": "dall-e-3", "prompt": "a purple square", "n": 1, "size": "1024x1024",
                    "response_format": "b64_json"}


def test_dalle_downloads_a_url_image_and_reports_api_errors(images_server, tmp_path: Path) -> None:
    server = images_server("url")
    tool = DalleTool(output_dir=tmp_path, api_key="sk-test", base_url=server.base_url, response_format="url")
    saved = Path(asyncio.run(tool.create_image("a cat")))
    assert saved.read_bytes() == server.image
    failing = images_server("b64", status=429)
    tool = DalleTool(output_dir=tmp_path, api_key="sk-test", base_url=failing.base_url)
    with pytest.raises(RuntimeError, match="HTTP 429: quota exceeded"):
        asyncio.run(tool.create_image("a cat"))


def test_dalle_without_a_key_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(RuntimeError, match="OPENAI_API_KEY"):
        asyncio.run(DalleTool().create_image("x"))


def test_cogview_downloads_the_image(images_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = images_server("url")
    monkeypatch.setenv("ZHIPUAI_API_KEY", "zp-test")
    monkeypatch.setenv("ZHIPUAI_BASE_URL", server.base_url + "/api/paas/v4")
    saved = Path(asyncio.run(CogViewTool(output_dir=tmp_path).create_image("一只紫色的猫")))
    assert saved.read_bytes() == server.image and saved.name.startswith("cogview-")
    path, headers, body = server.requests[0]
    assert path == "/api/paas/v4/images/generations" and headers["authorization"] == "Bearer zp-test"
    assert body == {"model": "cogview-3-flash", "prompt": "一只紫色的猫", "size": "1024x1024"}
    b64 = images_server("b64")
    answer = asyncio.run(CogViewTool(output_dir=tmp_path, base_url=b64.base_url).create_image("x"))
    assert Path(answer.splitlines()[0]).read_bytes() == b64.image


def test_image_analysis_sends_an_image_url_part(scripted, tmp_path: Path) -> None:
    (tmp_path / "chart.png").write_bytes(png(24, 12, "orange"))
    server = scripted(
        turns.tool_calls(turns.call("analyze_image", {"image": "chart.png", "question": "What colour?"}, id="a1")),
        turns.text("It is orange."),  # the vision request, made by the tool
        turns.text("The chart is orange."),
    )
    agent = Agent(scripted_model(server), tools=[ImageAnalysisTool(work_dir=tmp_path)])
    assert agent.run_sync("look at chart.png").content == "The chart is orange."
    vision = server.requests[1]["messages"]
    assert len(vision) == 1 and vision[0]["role"] == "user"
    text, part = vision[0]["content"]
    assert text == {"type": "text", "text": "What colour?"}
    header, _, data = part["image_url"]["url"].partition(",")
    assert header == "data:image/png;base64" and base64.b64decode(data) == (tmp_path / "chart.png").read_bytes()
    result = next(m for m in server.requests[2]["messages"] if m["role"] == "tool")
    assert result["content"] == "It is orange."


def test_image_analysis_passes_urls_and_refuses_paths_outside(scripted, tmp_path: Path) -> None:
    server = scripted(turns.text("A logo."))
    tool = ImageAnalysisTool(model=scripted_model(server), work_dir=tmp_path)
    assert asyncio.run(tool.analyze_image("https://example.invalid/logo.png")) == "A logo."
    assert server.requests[0]["messages"][0]["content"][1]["image_url"]["url"] == "https://example.invalid/logo.png"
    with pytest.raises(PermissionError):
        asyncio.run(tool.analyze_image("/etc/passwd"))


# -- OCR -----------------------------------------------------------------------------------------

CJK_FONTS = ["/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
             "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"]


def cjk_font() -> str:
    for path in CJK_FONTS:
        if Path(path).exists():
            return path
    pytest.skip("no CJK font to render Chinese text (Debian: apt-get install fonts-wqy-microhei)")


def test_ocr_reads_chinese_and_english_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rapidocr_onnxruntime", reason="rapidocr-onnxruntime (the ocr extra) is not installed")
    from PIL import ImageDraw, ImageFont

    font = ImageFont.truetype(cjk_font(), 40)
    img = PIL.new("RGB", (720, 200), "white")
    draw = ImageDraw.Draw(img)
    draw.text((30, 30), "Invoice 2026-12-01", fill="black", font=font)
    draw.text((30, 110), "发票金额：三百元整", fill="black", font=font)
    img.save(tmp_path / "scan.png")
    img.save(tmp_path / "scan.pdf")  # a "scanned" PDF page: the image at 72 dpi
    # no model download: the engine loads with every network connection refused (conftest) and
    # with the models found inside the installed package
    import rapidocr_onnxruntime

    models = Path(rapidocr_onnxruntime.__file__).parent / "models"
    assert sorted(p.suffix for p in models.iterdir() if p.suffix == ".onnx") == [".onnx"] * 3
    tool = OcrTool(work_dir=tmp_path, dpi=72)
    if importlib.util.find_spec("pypdfium2") or shutil.which("pdftoppm"):
        assert tool.ocr("scan.pdf").splitlines() == ["Invoice 2026-12-01", "发票金额：三百元整"]
        with pytest.raises(ValueError, match="has 1 page"):
            tool.ocr("scan.pdf", page=2)
    boxed = tool.ocr("scan.png", with_boxes=True).splitlines()
    assert boxed[0].endswith(" Invoice 2026-12-01")
    assert len(boxed) == 2 and boxed[1].endswith("发票金额：三百元整")
    x0, y0, x1, y1 = (int(v) for v in boxed[1].split("]")[0].strip("[").split(","))
    assert 20 <= x0 <= 40 and 100 <= y0 <= 125 and y1 > y0 and x1 > x0


def test_cli_config_builds_the_media_toolkits(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentica_cli.app.runtime import build_model
    from agentica_cli.app.settings.config import ConfigError, load_settings
    from agentica_cli.app.toolkit_setup import build_enabled_toolkits

    monkeypatch.setenv("AGENTICA_HOME", str(home))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # DalleTool is loaded only with its key
    (home / "config.toml").write_text('[tools]\nenable = ["image_analysis", "ocr", "dalle"]\n'
                                      '[toolkits.image_analysis]\nmodel = "gpt-4o-mini"\n'
                                      '[toolkits.dalle]\nsize = "512x512"\n')
    project = tmp_path / "project"
    project.mkdir()
    flags = {"model.base_url": "http://127.0.0.1:9/v1", "model.api_key": "sk-test", "model.name": "text-model"}
    settings = load_settings(project, flags, trusted=False)
    analysis, ocr, dalle = build_enabled_toolkits(settings, work_dir=project, model=build_model(settings))
    assert (analysis.model.id, analysis.model.base_url) == ("gpt-4o-mini", "http://127.0.0.1:9/v1")
    assert str(analysis.paths.resolve("a.png")) == str(project / "a.png")
    assert isinstance(ocr, OcrTool) and str(ocr.paths.resolve("scan.png")) == str(project / "scan.png")
    assert (dalle.size, dalle.output_dir) == ("512x512", str(project / "outputs"))
    (home / "config.toml").write_text('[tools]\nenable = ["ocr"]\n[toolkits.ocr]\nurl = "x"\n')
    with pytest.raises(ConfigError, match=r"toolkits.ocr: unknown option\(s\) url"):
        build_enabled_toolkits(load_settings(project, flags, trusted=False), work_dir=project)
    from agentica_cli.app.toolkit_setup import check_toolkits

    (home / "config.toml").write_text('[tools]\nenable = ["sql"]\n')  # checked at start-up, before any run
    with pytest.raises(ConfigError, match=r"sql toolkit needs a database: set \[toolkits.sql\] url"):
        check_toolkits(load_settings(project, flags, trusted=False))
