"""OcrTool: text from an image or a scanned PDF page, offline, Chinese and English.

RapidOCR on ONNX Runtime (`pip install 'agentica-cli[ocr]'`): the PP-OCRv4 detection and
recognition models and the angle classifier ship inside the `rapidocr-onnxruntime` wheel,
so nothing is downloaded at run time. The engine loads once per process (~2-3 s on a
2-core machine), then a 1080p screenshot takes about a second. PDF pages are rendered with
`pypdfium2` when installed, else with poppler's `pdftoppm`.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
import threading
from typing import Any

from agentica_cli.tools.base import Tool

_ENGINES: dict[int, Any] = {}
_ENGINE_LOCK = threading.Lock()


def ocr_engine(threads: int = 0) -> Any:
    """The process's RapidOCR engine for `threads` ONNX Runtime threads (0: all cores), loaded
    once: the models take seconds to load."""
    with _ENGINE_LOCK:
        if threads not in _ENGINES:
            from agentica_cli.toolkits._http import require_module

            module = require_module("rapidocr_onnxruntime", extra="ocr", package="rapidocr-onnxruntime",
                                    toolkit="OcrTool")
            count = threads if threads > 0 else -1
            _ENGINES[threads] = module.RapidOCR(intra_op_num_threads=count, inter_op_num_threads=count)
        return _ENGINES[threads]


def recognise(image: Any, min_score: float = 0.5, threads: int = 0) -> list[tuple[list[list[float]], str, float]]:
    """(box corners, text, confidence) for each line found in `image` (a path, bytes or an ndarray),
    top to bottom."""
    result, _ = ocr_engine(threads)(image)
    lines = [(box, text, float(score)) for box, text, score in result or () if float(score) >= min_score]
    return sorted(lines, key=lambda line: (round(line[0][0][1] / 10), line[0][0][0]))


class OcrTool(Tool):
    """`ocr(path, with_boxes=False, page=1)`: the text of an image (PNG, JPEG, BMP, WebP, ...) or
    of one page of a PDF, under `work_dir`."""

    extra = "ocr"  # for the CLI's /tools state (toolkits.catalog)
    extra_modules = ("rapidocr_onnxruntime",)

    def __init__(self, work_dir: str | os.PathLike[str] = ".", *, allowed_dirs: tuple[str, ...] = (),
                 min_score: float = 0.5, dpi: int = 200, threads: int = 0):
        super().__init__(name="ocr")
        from agentica_cli.tools.local.paths import PathSandbox

        self.paths = PathSandbox(work_dir, allowed_dirs)
        self.min_score = min_score
        self.dpi = dpi
        self.threads = threads  # ONNX Runtime threads, 0: all cores (1 wastes less CPU on a busy machine)
        self.register(self.ocr, is_read_only=True, concurrency_safe=True)

    def ocr(self, path: str, with_boxes: bool = False, page: int = 1) -> str:
        """Read the text in an image or a scanned PDF page (Chinese and English), offline.

        Args:
            path: Image file (PNG, JPEG, BMP, WebP, TIFF) or PDF.
            with_boxes: Also give each line's box as [x0,y0,x1,y1] pixels and its confidence.
            page: With a PDF, the page to read (1-based).
        """
        from agentica_cli.toolkits._support import read_bytes

        data, shown = read_bytes(self.paths, path)
        if data.startswith(b"%PDF"):
            data = self._pdf_page_png(data, page, shown)
        lines = recognise(data, self.min_score, self.threads)
        if not lines:
            return f"(no text found in {shown})"
        if not with_boxes:
            return "\n".join(text for _, text, _ in lines)
        out = []
        for box, text, score in lines:
            xs, ys = [p[0] for p in box], [p[1] for p in box]
            out.append(f"[{min(xs):.0f},{min(ys):.0f},{max(xs):.0f},{max(ys):.0f}] {score:.2f} {text}")
        return "\n".join(out)

    def _pdf_page_png(self, data: bytes, page: int, shown: str) -> bytes:
        if page < 1:
            raise ValueError(f"page must be 1 or more, got {page}")
        try:
            import pypdfium2
        except ImportError:
            pypdfium2 = None
        if pypdfium2 is not None:
            pdf = pypdfium2.PdfDocument(data)
            if page > len(pdf):
                raise ValueError(f"{shown} has {len(pdf)} page(s); no page {page}")
            bitmap = pdf[page - 1].render(scale=self.dpi / 72)
            out = io.BytesIO()
            bitmap.to_pil().save(out, "PNG")
            return out.getvalue()
        tool = shutil.which("pdftoppm")
        if tool is None:
            raise RuntimeError("reading a PDF needs pypdfium2 (pip install pypdfium2) or poppler's pdftoppm")
        with tempfile.TemporaryDirectory(prefix="agentica-ocr-") as folder:
            source = os.path.join(folder, "in.pdf")
            with open(source, "wb") as f:
                f.write(data)
            done = subprocess.run([tool, "-png", "-r", str(self.dpi), "-f", str(page), "-l", str(page), "-singlefile",
                                   source, os.path.join(folder, "page")], capture_output=True, timeout=120)
            target = os.path.join(folder, "page.png")
            if done.returncode != 0 or not os.path.exists(target):
                raise ValueError(f"could not render page {page} of {shown}: "
                                 f"{done.stderr.decode(errors='replace').strip()[:200] or 'no such page?'}")
            with open(target, "rb") as f:
                return f.read()
