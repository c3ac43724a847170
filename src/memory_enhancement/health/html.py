"""The health dashboard: one self-contained HTML file (no network, no CDN).

Charts are SVG drawn here, so the page needs no library; a few lines of inline
script only filter the table. Everything shown is escaped.
"""

from __future__ import annotations

import math
from html import escape

from memory_enhancement.health.render import LABELS
from memory_enhancement.health.report import STATUSES, HealthReport

COLOURS = {
    "missing": "#b42318",
    "stale": "#d92d20",
    "dangling_links": "#dc6803",
    "moved": "#f79009",
    "expired": "#667085",
    "unchecked": "#98a2b3",
    "uncited": "#98a2b3",
    "orphan": "#7a5af8",
    "healthy": "#039855",
    "valid": "#039855",
    "out_of_range": "#b54708",
    "invalid": "#912018",
    "skipped": "#98a2b3",
}
VERDICTS = ("valid", "moved", "stale", "missing", "out_of_range", "invalid", "skipped")

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#101828;background:#f9fafb}
header{background:#101828;color:#fff;padding:18px 28px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#d0d5dd}main{padding:20px 28px;max-width:1200px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-bottom:18px}
.card{background:#fff;border:1px solid #eaecf0;border-radius:8px;padding:10px 14px;min-width:110px}
.card b{display:block;font-size:22px}.card span{color:#475467;font-size:12px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(340px,1fr));gap:16px}
section{background:#fff;border:1px solid #eaecf0;border-radius:8px;padding:14px 16px;margin-bottom:16px}
h2{font-size:15px;margin:0 0 10px}svg text{font-size:11px;fill:#344054}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #eaecf0}
th{font-size:12px;color:#475467}td.num{text-align:right}.pill{border-radius:10px;padding:1px 8px;color:#fff;font-size:12px}
.filters{display:flex;gap:10px;margin-bottom:10px}input,select{padding:5px 8px;border:1px solid #d0d5dd;border-radius:6px}
code{font-size:12px}.muted{color:#667085}
"""

SCRIPT = """
(function () {
  var text = document.getElementById('filter-text');
  var status = document.getElementById('filter-status');
  var rows = document.querySelectorAll('#memories tbody tr');
  var count = document.getElementById('shown');
  function apply() {
    var q = text.value.toLowerCase(), s = status.value, n = 0;
    rows.forEach(function (row) {
      var ok = (!q || row.dataset.search.indexOf(q) >= 0) &&
               (!s || row.dataset.flags.split(' ').indexOf(s) >= 0);
      row.style.display = ok ? '' : 'none';
      if (ok) { n += 1; }
    });
    count.textContent = String(n);
  }
  text.addEventListener('input', apply);
  status.addEventListener('change', apply);
  apply();
})();
"""


def render(report: HealthReport, limit: int | None = None) -> str:
    memories = report.memories[:limit] if limit else report.memories
    cards = "".join(
        f'<div class="card" style="border-top:3px solid {COLOURS[s]}">'
        f"<b>{report.status_counts[s]}</b><span>{escape(LABELS[s])}</span></div>"
        for s in STATUSES
    )
    options = "".join(f'<option value="{s}">{escape(LABELS[s])}</option>' for s in STATUSES)
    rows = "".join(_row(n, m) for n, m in enumerate(memories, start=1))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Memory health</title><style>{STYLE}</style></head>
<body><header><h1>Memory health</h1>
<p>{report.total} memories in <code>{escape(report.store)}</code> · {escape(report.generated_at)}</p>
</header><main>
<div class="cards">{cards}</div>
<div class="grid">
<section id="chart-confidence"><h2>Confidence</h2>{_histogram(report.histogram)}</section>
<section id="chart-history"><h2>Verdicts over time</h2>{_history(report.verdict_days)}</section>
<section id="chart-files"><h2>Cited files that broke the most memories</h2>
{_files(report.broken_files)}</section>
</div>
<section id="graph"><h2>Links around the worst memories</h2>{_graph(report.graph)}</section>
<section><h2>Memories, most urgent first (<span id="shown">{len(memories)}</span> shown)</h2>
<div class="filters"><input id="filter-text" type="search" placeholder="Filter by path or title">
<select id="filter-status"><option value="">any status</option>{options}</select></div>
<table id="memories"><thead><tr><th>#</th><th>Memory</th><th>Status</th><th>Confidence</th>
<th>Citations ok / moved / failing</th><th>Dangling links</th><th>Last verified</th><th>Uses</th>
</tr></thead><tbody>{rows}</tbody></table></section>
</main><script>{SCRIPT}</script></body></html>
"""


def _row(rank: int, memory: object) -> str:
    from memory_enhancement.health.report import MemoryHealth

    assert isinstance(memory, MemoryHealth)
    c = {k: n + memory.mentions.get(k, 0) for k, n in memory.citations.items()}
    failing = c["stale"] + c["missing"] + c["out_of_range"] + c["invalid"]
    search = escape(f"{memory.path} {memory.title}".lower(), quote=True)
    problems = "".join(
        f"<br><span class='muted'>{escape(ref)}: {escape(reason)}</span>"
        for ref, reason in memory.stale_details[:3]
    )
    return (
        f'<tr data-search="{search}" data-flags="{" ".join(memory.flags)}">'
        f'<td class="num">{rank}</td>'
        f"<td><code>{escape(memory.path)}</code> <span class='muted'>[mem:{memory.citation_id}]"
        f"</span><br>{escape(memory.title)}{problems}</td>"
        f'<td><span class="pill" style="background:{COLOURS[memory.status]}">'
        f"{escape(LABELS[memory.status])}</span></td>"
        f'<td class="num">{memory.confidence.score:.2f}</td>'
        f'<td class="num">{c["valid"]} / {c["moved"]} / {failing}</td>'
        f'<td class="num">{memory.dangling_links}</td>'
        f"<td>{escape((memory.last_verified or 'never')[:16])}</td>"
        f'<td class="num">{memory.uses}</td></tr>'
    )


def _histogram(counts: list[int]) -> str:
    width, height, pad = 340, 160, 24
    top = max(counts) or 1
    bar = (width - pad) / len(counts)
    parts = [f'<svg viewBox="0 0 {width} {height + 20}" width="100%" role="img">']
    for n, count in enumerate(counts):
        h = (height - pad) * count / top
        x = pad + n * bar
        colour = "#d92d20" if n < 4 else "#f79009" if n < 7 else "#039855"
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{height - h:.1f}" width="{bar - 4:.1f}" '
            f'height="{h:.1f}" fill="{colour}"><title>{n / 10:.1f}–{(n + 1) / 10:.1f}: '
            f"{count}</title></rect>"
        )
        if count:
            parts.append(f'<text x="{x + bar / 2 - 4:.1f}" y="{height - h - 3:.1f}">{count}</text>')
        parts.append(f'<text x="{x:.1f}" y="{height + 14}">{n / 10:.1f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _history(days: list[tuple[str, dict[str, int]]]) -> str:
    if not days:
        return '<p class="muted">No verification recorded yet.</p>'
    width, height, pad = 340, 160, 24
    top = max(sum(c.values()) for _, c in days) or 1
    bar = (width - pad) / max(len(days), 1)
    parts = [f'<svg viewBox="0 0 {width} {height + 20}" width="100%" role="img">']
    for n, (day, counts) in enumerate(days):
        y = float(height)
        for verdict in VERDICTS:
            count = counts.get(verdict, 0)
            if not count:
                continue
            h = (height - pad) * count / top
            y -= h
            parts.append(
                f'<rect class="bar" x="{pad + n * bar:.1f}" y="{y:.1f}" width="{max(bar - 2, 1):.1f}" '
                f'height="{h:.1f}" fill="{COLOURS[verdict]}"><title>{escape(day)} {verdict}: '
                f"{count}</title></rect>"
            )
    parts.append(f'<text x="{pad}" y="{height + 14}">{escape(days[0][0])}</text>')
    parts.append(f'<text x="{width - 70}" y="{height + 14}">{escape(days[-1][0])}</text>')
    legend = "".join(
        f'<tspan fill="{COLOURS[v]}">■</tspan><tspan> {v} </tspan>' for v in VERDICTS[:4]
    )
    parts.append(f'<text x="{pad}" y="12">{legend}</text></svg>')
    return "".join(parts)


def _files(files: list[tuple[str, int, int]]) -> str:
    if not files:
        return '<p class="muted">No failing citations.</p>'
    top = max(n for _, n, _ in files) or 1
    rows = len(files[:10])
    # 370 wide: the longest bar ends at 335 and its count is written after it.
    parts = [f'<svg viewBox="0 0 370 {rows * 22 + 4}" width="100%" role="img">']
    for n, (file, count, memories) in enumerate(files[:10]):
        w = 150 * count / top
        y = n * 22 + 2
        label = file if len(file) <= 30 else "…" + file[-29:]
        parts.append(f'<text x="0" y="{y + 14}">{escape(label)}</text>')
        parts.append(
            f'<rect class="bar" x="185" y="{y + 3}" width="{w:.1f}" height="14" fill="#d92d20">'
            f"<title>{escape(file)}: {count} failing citations in {memories} memories</title></rect>"
        )
        parts.append(f'<text x="{190 + w:.1f}" y="{y + 14}">{count}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _graph(graph: dict[str, object]) -> str:
    nodes = graph.get("nodes") or []
    edges = graph.get("edges") or []
    assert isinstance(nodes, list) and isinstance(edges, list)
    if not nodes:
        return '<p class="muted">No unhealthy memories.</p>'
    size, radius = 640, 230
    centre = size / 2
    where = {}
    for n, node in enumerate(nodes):
        angle = 2 * math.pi * n / len(nodes) - math.pi / 2
        where[node["path"]] = (centre + radius * math.cos(angle), centre + radius * math.sin(angle))
    parts = [
        f'<svg viewBox="0 0 {size} {size}" width="100%" role="img">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" '
        'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#98a2b3"/></marker></defs>'
    ]
    for edge in edges:
        (x1, y1), (x2, y2) = where[edge["source"]], where[edge["target"]]
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#98a2b3" '
            f'marker-end="url(#arrow)"><title>{escape(edge["type"])}</title></line>'
        )
    for node in nodes:
        x, y = where[node["path"]]
        r = 9 if node["worst"] else 6
        label = node["path"].rsplit("/", 1)[-1][:28]
        anchor = "start" if x >= centre else "end"
        dx = 12 if x >= centre else -12
        parts.append(
            f'<circle class="node" cx="{x:.1f}" cy="{y:.1f}" r="{r}" '
            f'fill="{COLOURS.get(node["status"], "#98a2b3")}"><title>{escape(node["path"])} '
            f"({escape(node['status'])})</title></circle>"
            f'<text x="{x + dx:.1f}" y="{y + 4:.1f}" text-anchor="{anchor}">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
