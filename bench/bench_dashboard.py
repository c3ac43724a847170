"""How soon the HTML health dashboard is usable in headless Chromium (issue 16).

For each size (default 3, 1,000 and 10,000 memories) a store is generated with
`tests/dashboard_support.py`, verified once (`service.health()`), and rendered by
this checkout's `health/html.py` and by the baseline commit's (`git show
BASE:src/memory_enhancement/health/html.py`, loaded as a module, given the same
report). Each page is loaded `--runs` times in one Chromium, pages alternating;
"ready" is the page's own time from navigation start to the first frame drawn after
its script ran (layout done, the filter live; the baseline page gets that one mark
added after its script, nothing else).

    .venv/bin/python bench/bench_dashboard.py [--sizes 3 1000 10000] [--runs 5]
        [--base 3dce8f3]

Needs Debian's chromium and chromium-driver and selenium (the dev extra).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from dashboard_support import make_repo, make_store  # noqa: E402
from memory_enhancement.health.html import render  # noqa: E402
from memory_enhancement.service import MemoryService  # noqa: E402
from memory_enhancement.store.disk import Store  # noqa: E402
from memory_enhancement.verify.repo import Repository  # noqa: E402

MARK = (
    "requestAnimationFrame(function () { setTimeout(function () {"
    " document.body.dataset.ready = String(Math.round(performance.now())); }, 0); });"
)


def baseline_render(base: str, folder: Path) -> Any:
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{base}:src/memory_enhancement/health/html.py"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    file = folder / "baseline_html.py"
    file.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("baseline_html", file)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.render


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,2200"):  # fmt: skip
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def ready_ms(driver: Any, page: Path) -> int:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page.as_uri())
    return int(
        WebDriverWait(driver, 120).until(
            lambda d: d.execute_script("return document.body && document.body.dataset.ready")
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[3, 1000, 10_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--base", default="3dce8f3")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as tmp:
        folder = Path(tmp)
        old_render = baseline_render(args.base, folder)
        pages: list[tuple[int, str, Path]] = []
        for size in args.sizes:
            repo = make_repo(folder / f"s{size}" / "repo")
            make_store(repo / ".memories", size)
            service = MemoryService(
                Store(repo / ".memories", "project"), Repository(repo),
                index_path=folder / f"s{size}" / "index.db",
            )  # fmt: skip
            report = service.health()
            old = old_render(report).replace("})();\n</script>", f"}})();\n{MARK}\n</script>")
            for name, text in (("before", old), ("after", render(report))):
                page = folder / f"{name}-{size}.html"
                page.write_text(text, encoding="utf-8")
                pages.append((size, name, page))
        driver = browser()
        times: dict[tuple[int, str], list[int]] = {(s, n): [] for s, n, _ in pages}
        try:
            for _ in range(args.runs):
                for size, name, page in pages:
                    times[(size, name)].append(ready_ms(driver, page))
        finally:
            driver.quit()
        print("| page | size | before: ready (ms) | after: ready (ms) |")
        print("|---|---|---|---|")
        for size in args.sizes:
            kib = (folder / f"after-{size}.html").stat().st_size // 1024
            cells = [
                f"{statistics.median(times[(size, n)]):.0f} "
                f"({min(times[(size, n)])}-{max(times[(size, n)])})"
                for n in ("before", "after")
            ]
            print(f"| {size:,} memories | {kib} KiB | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
