"""The health dashboard: one self-contained HTML file (no network, no CDN).

Charts are SVG drawn here, so the page needs no library; a few lines of inline
script only filter the table. Everything shown is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from memory_enhancement.health.render import (
    LABELS,
    OVERLAP,
    ROW_LABELS,
    checked_counts,
    ok_moved_failing,
)
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
PAGE_ROWS = 200  # table rows laid out at first; the others wait behind "show more"
FILE_CHARS = 58  # what fits in the files chart at 11 px
GRAPH_CHARS = 50  # what fits in half the graph
GRAPH_NEIGHBOURS = 30  # linked memories drawn next to the worst ones, most connected first

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
code{font-size:12px}.muted{color:#667085}.small{font-size:12px;margin:6px 0 0}
.legend{list-style:none;display:flex;flex-wrap:wrap;gap:4px 14px;margin:8px 0 0;padding:0;font-size:12px;color:#344054}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.pill{white-space:nowrap}button{padding:6px 12px;border:1px solid #d0d5dd;border-radius:6px;background:#fff;cursor:pointer}
"""

SCRIPT = """
(function () {
  var PAGE = PAGE_ROWS;
  var text = document.getElementById('filter-text');
  var status = document.getElementById('filter-status');
  var more = document.getElementById('show-more');
  var rows = document.querySelectorAll('#memories tbody tr');
  var count = document.getElementById('shown');
  var matching = document.getElementById('matching');
  var limit = PAGE;
  function apply() {
    var q = text.value.toLowerCase(), s = status.value, n = 0, m = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var ok = (!q || row.dataset.search.indexOf(q) >= 0) &&
               (!s || row.dataset.flags.split(' ').indexOf(s) >= 0);
      if (ok) { m += 1; }
      var show = ok && m <= limit;
      if (row.hidden === show) { row.hidden = !show; }
      if (show) { n += 1; }
    }
    count.textContent = String(n);
    matching.textContent = String(m);
    more.hidden = m <= n;
  }
  function restart() { limit = PAGE; apply(); }
  text.addEventListener('input', restart);
  status.addEventListener('change', restart);
  more.addEventListener('click', function () { limit += PAGE * 5; apply(); });
  apply();
  // When the first frame after this is drawn (layout done), the page is usable: say when.
  requestAnimationFrame(function () {
    setTimeout(function () {
      document.body.dataset.ready = String(Math.round(performance.now()));
    }, 0);
  });
})();
""".replace("PAGE_ROWS", str(PAGE_ROWS))


def render(report: HealthReport, limit: int | None = None) -> str:
    memories = report.memories[:limit] if limit else report.memories
    cards = "".join(
        f'<div class="card" style="border-top:3px solid {COLOURS[s]}">'
        f"<b>{report.flag_counts[s]}</b><span>{escape(LABELS[s])}</span></div>"
        for s in STATUSES
    )  # as the status filter picks rows: every memory with that flag
    several = sum(report.flag_counts.values()) > report.total
    overlap = f'<p class="muted">{escape(OVERLAP)}</p>' if several else ""
    options = "".join(f'<option value="{s}">{escape(LABELS[s])}</option>' for s in STATUSES)
    rows = "".join(_row(n, m, hidden=n > PAGE_ROWS) for n, m in enumerate(memories, start=1))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Memory health</title><style>{STYLE}</style></head>
<body><header><h1>Memory health</h1>
<p>{report.total} memor{"y" if report.total == 1 else "ies"} in <code>{escape(report.store)}</code> · {escape(report.generated_at)}</p>
<p>{escape(checked_counts(report).replace("**", ""))}</p>
</header><main>
<div class="cards">{cards}</div>{overlap}
<div class="grid">
<section id="chart-confidence"><h2>Confidence</h2>{_histogram(report.histogram)}</section>
<section id="chart-history"><h2>Verdicts over time</h2>{_history(report.verdict_days)}</section>
<section id="chart-files"><h2>Cited files that broke the most memories</h2>
{_files(report.broken_files)}</section>
</div>
<section id="graph"><h2>Links around the worst memories</h2>{_graph(report.graph)}</section>
<section><h2>Memories, most urgent first (<span id="shown">{min(len(memories), PAGE_ROWS)}</span> shown of <span id="matching">{len(memories)}</span>)</h2>
<div class="filters"><input id="filter-text" type="search" placeholder="Filter by path or title">
<select id="filter-status"><option value="">any status</option>{options}</select></div>
<table id="memories"><thead><tr><th>#</th><th>Memory</th><th>Status</th><th>Confidence</th>
<th>Citations ok / moved / failing</th><th>Mentions ok / moved / failing</th><th>Dangling links</th><th>Last verified</th><th>Uses</th>
</tr></thead><tbody>{rows}</tbody></table>
<p><button id="show-more" type="button"{"" if len(memories) > PAGE_ROWS else " hidden"}>Show more</button></p></section>
</main><script>{SCRIPT}</script></body></html>
"""


def _row(rank: int, memory: object, *, hidden: bool = False) -> str:
    from memory_enhancement.health.report import MemoryHealth

    assert isinstance(memory, MemoryHealth)
    search = escape(f"{memory.path} {memory.title}".lower(), quote=True)
    problems = "".join(
        f"<br><span class='muted'>{escape(ref)}: {escape(reason)}</span>"
        for ref, reason in memory.stale_details[:3]
    )
    return (
        f'<tr data-search="{search}" data-flags="{" ".join(memory.flags)}"'
        f"{' hidden' if hidden else ''}>"
        f'<td class="num">{rank}</td>'
        f"<td><code>{escape(memory.path)}</code> <span class='muted'>[mem:{memory.citation_id}]"
        f"</span><br>{escape(memory.title)}{problems}</td>"
        f'<td><span class="pill" style="background:{COLOURS[memory.status]}">'
        f"{escape(ROW_LABELS[memory.status])}</span></td>"
        f'<td class="num">{memory.confidence.score:.2f}</td>'
        f'<td class="num">{ok_moved_failing(memory.citations)}</td>'
        f'<td class="num">{ok_moved_failing(memory.mentions)}</td>'
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
            parts.append(
                f'<text x="{x + (bar - 4) / 2:.1f}" y="{height - h - 3:.1f}" '
                f'text-anchor="middle">{count}</text>'
            )
        parts.append(f'<text x="{x:.1f}" y="{height + 14}">{n / 10:.1f}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _history(days: list[tuple[str, dict[str, int]]]) -> str:
    """Stacked bars per day, at most 36 px wide (one day is one bar, not a block), the
    largest day's total on the axis, and the latest day's counts in the legend."""
    if not days:
        return '<p class="muted">No verification recorded yet.</p>'
    width, height, pad, top_pad = 340, 160, 30, 14
    top = max(sum(c.values()) for _, c in days) or 1
    step = (width - pad) / len(days)
    bar = min(36.0, max(step - 2, 1.0))
    parts = [f'<svg viewBox="0 0 {width} {height + 20}" width="100%" role="img">']
    parts.append(
        f'<line x1="{pad - 4}" y1="{height}" x2="{width}" y2="{height}" stroke="#d0d5dd"/>'
        f'<text x="{pad - 6}" y="{top_pad + 4}" text-anchor="end">{_compact(top)}</text>'
        f'<text x="{pad - 6}" y="{height}" text-anchor="end">0</text>'
    )
    for n, (day, counts) in enumerate(days):
        y = float(height)
        for verdict in VERDICTS:
            count = counts.get(verdict, 0)
            if not count:
                continue
            h = (height - top_pad) * count / top
            y -= h
            parts.append(
                f'<rect class="bar" x="{pad + n * step:.1f}" y="{y:.1f}" width="{bar:.1f}" '
                f'height="{h:.1f}" fill="{COLOURS[verdict]}"><title>{escape(day)} {verdict}: '
                f"{count}</title></rect>"
            )
    parts.append(f'<text x="{pad}" y="{height + 14}">{escape(days[0][0])}</text>')
    if len(days) > 1:
        parts.append(
            f'<text x="{width}" y="{height + 14}" text-anchor="end">{escape(days[-1][0])}</text>'
        )
    parts.append("</svg>")
    last_day, last = days[-1]
    shown = [v for v in VERDICTS if any(c.get(v) for _, c in days)]
    legend = _legend((COLOURS[v], f"{v.replace('_', ' ')} {last.get(v, 0)}") for v in shown)
    note = (
        " One day of history so far: the trend shows as later runs are recorded."
        if len(days) == 1
        else ""
    )
    parts.append(
        f'{legend}<p class="muted small">Citations per verdict each day; counts of '
        f"{escape(last_day)}.{note}</p>"
    )
    return "".join(parts)


def _legend(items: Iterable[tuple[str, str]]) -> str:
    """A legend in HTML, so it wraps instead of running off a chart."""
    return (
        '<ul class="legend">'
        + "".join(
            f'<li><i style="background:{colour}"></i>{escape(label)}</li>'
            for colour, label in items
        )
        + "</ul>"
    )


def _compact(count: int) -> str:
    """An axis label that fits: 950, 9.5k, 20k."""
    if count < 1000:
        return str(count)
    return f"{count / 1000:.1f}k".replace(".0k", "k") if count < 10_000 else f"{count // 1000}k"


def _clip(text: str, chars: int) -> str:
    """A path cut to `chars`: its first folder and its name when they fit, else its name,
    else the start of its name (where names differ: `adr-007-...`, `adr-014-...`)."""
    if len(text) <= chars:
        return text
    head, _, name = text.rpartition("/")
    for short in (f"{head.split('/', 1)[0]}/…/{name}", f"…/{name}" if head else name):
        if len(short) <= chars:
            return short
    return name[: chars - 1] + "…"


def _files(files: list[tuple[str, int, int]]) -> str:
    """One row per file: its name above its bar, so a long name never covers a bar."""
    if not files:
        return '<p class="muted">No failing citations.</p>'
    shown = files[:10]
    top = max(n for _, n, _ in shown) or 1
    width, row = 370, 34
    parts = [f'<svg viewBox="0 0 {width} {len(shown) * row + 4}" width="100%" role="img">']
    for n, (file, count, memories) in enumerate(shown):
        w = (width - 40) * count / top
        y = n * row + 2
        parts.append(f'<text x="0" y="{y + 11}">{escape(_clip(file, FILE_CHARS))}</text>')
        parts.append(
            f'<rect class="bar" x="0" y="{y + 15}" width="{w:.1f}" height="12" fill="#d92d20">'
            f"<title>{escape(file)}: {count} failing citations in {memories} "
            f"memor{'y' if memories == 1 else 'ies'}</title></rect>"
        )
        parts.append(f'<text x="{w + 5:.1f}" y="{y + 25}">{count}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _graph(graph: dict[str, object]) -> str:
    """The worst memories (left) and the memories they link with (right), one row each.

    Rows never share a line, so labels cannot overlap; a label is cut from the left
    to fit its half of the picture (the full path is in its tooltip). An arrow runs
    from the memory that links to the memory it names; links between two of the
    worst curve through the middle. The height follows the number of rows.
    """
    nodes = graph.get("nodes") or []
    edges = graph.get("edges") or []
    assert isinstance(nodes, list) and isinstance(edges, list)
    if not nodes:
        return '<p class="muted">No unhealthy memories.</p>'
    left = [n for n in nodes if n["worst"]]
    degree: dict[str, int] = {}
    for edge in edges:
        for end in (edge["source"], edge["target"]):
            degree[end] = degree.get(end, 0) + 1
    others = sorted((n for n in nodes if not n["worst"]), key=lambda n: -degree.get(n["path"], 0))
    right, hidden = others[:GRAPH_NEIGHBOURS], others[GRAPH_NEIGHBOURS:]
    width, lx, rx, top = 960, 340, 620, 16
    height = max(len(left) * 26, len(right) * 20, 40) + 2 * top
    where: dict[str, tuple[float, float]] = {}
    for column, x in ((left, lx), (right, rx)):
        gap = (height - 2 * top) / max(len(column), 1)
        for n, node in enumerate(column):
            where[node["path"]] = (x, top + gap * (n + 0.5))
    parts = [
        f'<svg viewBox="0 0 {width} {height}" width="100%" role="img">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#667085"/></marker></defs>'
    ]
    for edge in edges:
        if edge["source"] not in where or edge["target"] not in where:
            continue
        (x1, y1), (x2, y2) = where[edge["source"]], where[edge["target"]]
        if x1 == x2:  # both among the worst: a bow into the middle
            bow = x1 + min(250.0, 30 + abs(y2 - y1) / 2)
            path = f"M{x1 + 8:.1f},{y1:.1f} C{bow:.1f},{y1:.1f} {bow:.1f},{y2:.1f} {x2 + 9:.1f},{y2:.1f}"
        else:
            sx, tx = (x1 + 8, x2 - 9) if x1 < x2 else (x1 - 8, x2 + 9)
            mid = (sx + tx) / 2
            path = f"M{sx:.1f},{y1:.1f} C{mid:.1f},{y1:.1f} {mid:.1f},{y2:.1f} {tx:.1f},{y2:.1f}"
        title = f"{edge['source']} → {edge['target']} ({edge['type']})"
        parts.append(
            f'<path class="edge" d="{path}" fill="none" stroke="#98a2b3" stroke-width="1.2" '
            f'marker-end="url(#arrow)"><title>{escape(title)}</title></path>'
        )
    for column, x, anchor, dx in ((left, lx, "end", -14), (right, rx, "start", 14)):
        for node in column:
            _, y = where[node["path"]]
            r = 7 if node["worst"] else 5
            parts.append(
                f'<circle class="node" cx="{x}" cy="{y:.1f}" r="{r}" '
                f'fill="{COLOURS.get(node["status"], "#98a2b3")}"><title>{escape(node["path"])} '
                f"({escape(node['status'])})</title></circle>"
                f'<text x="{x + dx}" y="{y + 4:.1f}" text-anchor="{anchor}">'
                f"{escape(_clip(node['path'], GRAPH_CHARS))}</text>"
            )
    parts.append("</svg>")
    statuses = [s for s in STATUSES if any(n["status"] == s for n in nodes)]
    legend = _legend((COLOURS[s], LABELS[s]) for s in statuses)
    more = f" {len(hidden)} more linked memories are not drawn." if hidden else ""
    parts.append(
        f'{legend}<p class="muted small">Left: the {len(left)} most urgent memories; right: '
        f"memories they link with. An arrow points from the memory that links to the one it "
        f"names; hover for the full path and the link type.{more}</p>"
    )
    return "".join(parts)
