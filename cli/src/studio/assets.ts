/** The studio's one stylesheet and one script, served from its own origin (the CSP allows nothing inline). */
export const STUDIO_CSS = `
:root { --fg:#1d232b; --muted:#6b7480; --line:#dfe3e8; --bg:#f7f8fa; --accent:#2f6fde; --warn:#c77800; --bad:#c62828; --ok:#2e7d32;
  --system:#8e6bd6; --recall:#e0902b; --history:#2f6fde; --reserve:#9aa3ad; --free:#e9ecf0; font-family: system-ui, sans-serif; }
* { box-sizing: border-box; }
body { margin:0; color:var(--fg); background:var(--bg); font-size:14px; }
header { display:flex; gap:16px; align-items:center; padding:8px 16px; background:#1d232b; color:#fff; }
header a { color:#cfd8e3; text-decoration:none; } header a.active, header a:hover { color:#fff; }
header .brand { font-weight:600; color:#fff; margin-right:12px; }
header .store { margin-left:auto; color:#9fb0c3; font-family:ui-monospace,monospace; font-size:12px; }
.mode { padding:2px 8px; border-radius:10px; background:#3a4552; font-size:12px; } .mode.writes { background:var(--warn); color:#000; }
nav.tabs { display:flex; gap:4px; align-items:center; padding:6px 16px 0; background:#fff; border-bottom:1px solid var(--line); }
nav.tabs .session-id { font-family:ui-monospace,monospace; margin-right:12px; color:var(--muted); }
nav.tabs a { padding:6px 12px; border:1px solid transparent; border-bottom:none; text-decoration:none; color:var(--accent); border-radius:6px 6px 0 0; }
nav.tabs a.active { border-color:var(--line); background:var(--bg); color:var(--fg); margin-bottom:-1px; }
main { padding:12px 16px 40px; max-width:1400px; }
h1 { font-size:20px; margin:4px 0 12px; } h2 { font-size:16px; margin:20px 0 8px; } h3 { font-size:14px; }
table { border-collapse:collapse; width:100%; background:#fff; border:1px solid var(--line); }
th, td { padding:5px 8px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { background:#f0f2f5; font-weight:600; font-size:12px; } td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
td.empty { color:var(--muted); text-align:center; } .muted { color:var(--muted); } code { font-family:ui-monospace,monospace; font-size:12px; }
form.search, form.prompt-form, form.preview-form { display:flex; flex-wrap:wrap; gap:10px; align-items:end; margin:0 0 12px; }
label { display:flex; flex-direction:column; gap:2px; font-size:12px; color:var(--muted); } label.check { flex-direction:row; align-items:center; gap:6px; }
label.wide { flex:1 1 420px; } input, select, textarea { font:inherit; padding:4px 6px; border:1px solid #c5ccd4; border-radius:4px; color:var(--fg); }
button { font:inherit; padding:5px 12px; border-radius:4px; border:1px solid var(--accent); background:var(--accent); color:#fff; cursor:pointer; }
button[disabled] { background:#c5ccd4; border-color:#c5ccd4; cursor:not-allowed; } button.danger { background:var(--bad); border-color:var(--bad); }
.pager { display:flex; gap:16px; } .timing { color:var(--muted); margin-left:auto; }
.pressure { display:inline-flex; align-items:center; gap:6px; } .pressure svg { width:90px; height:8px; }
.pressure .track { fill:#e6e9ee; } .pressure.low .fill { fill:var(--ok); } .pressure.mid .fill { fill:var(--warn); } .pressure.high .fill { fill:var(--bad); }
.pressure em { font-style:normal; font-size:12px; color:var(--muted); width:40px; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:2px 16px; background:#fff; border:1px solid var(--line); padding:8px 12px; }
dl.facts dt { color:var(--muted); } dl.facts dd { margin:0; } .ok { color:var(--ok); } .bad, .state-behind, .state-newer { color:var(--bad); }
.notice { padding:8px 12px; border-radius:4px; } .notice.error { background:#fdecea; color:var(--bad); } .notice.info { background:#e8f0fe; }
.legend { color:var(--muted); }
ol.events, ol.prompt { list-style:none; padding:0; margin:0; }
li.event, ol.prompt li { background:#fff; border:1px solid var(--line); border-left:4px solid #c5ccd4; margin:6px 0; padding:6px 10px; }
li.role-user { border-left-color:#2f6fde; } li.role-assistant { border-left-color:#2e7d32; } li.role-tool { border-left-color:#8d6e63; } li.role-system { border-left-color:var(--system); }
li.event.archived { opacity:.62; background:#fafafa; } li.event.recalled { opacity:1; outline:2px solid var(--recall); background:#fff7ec; }
li.event.sent .index { font-weight:700; } li.event:target { outline:2px solid var(--accent); }
.meta { display:flex; flex-wrap:wrap; gap:8px; align-items:center; font-size:12px; color:var(--muted); }
.meta .role { font-weight:600; color:var(--fg); } .meta time { margin-left:auto; } .event-id { color:var(--muted); }
pre.text { white-space:pre-wrap; word-break:break-word; margin:4px 0; font-family:ui-monospace,monospace; font-size:12.5px; }
details.long > summary { list-style:none; cursor:pointer; } details.long[open] > summary { display:none; } .more { color:var(--accent); font-size:12px; }
.badge { display:inline-block; padding:0 6px; border-radius:8px; font-size:11px; background:#eceff3; color:#38424d; }
.b-archived { background:#e0e0e0; } .b-active { background:#e3f2e5; color:var(--ok); } .b-pinned { background:#fff3c4; } .b-masked { background:#ede7f6; }
.b-summary { background:#e3ecfd; color:#1f4fa3; } .b-native-compaction { background:#d7f0f4; } .b-incomplete { background:#fdecea; color:var(--bad); }
.b-redacted { background:#3a4552; color:#fff; } .b-recalled { background:var(--recall); color:#fff; }
.pairing { font-size:12px; margin:2px 0; color:#5d4037; } details.covers summary { cursor:pointer; color:#1f4fa3; font-size:12px; }
ol.originals { margin:4px 0; padding-left:18px; font-size:12px; }
svg.chart { width:100%; max-width:900px; height:auto; background:#fff; border:1px solid var(--line); }
svg.chart .grid { stroke:#eef0f3; } svg.chart .window { stroke:var(--bad); stroke-dasharray:6 4; } svg.chart .axis { font-size:11px; fill:var(--muted); }
svg.chart .tokens { fill:none; stroke:var(--accent); stroke-width:2; } svg.chart .compaction { fill:var(--bad); }
figcaption { color:var(--muted); font-size:12px; margin:4px 0 12px; } tr.reverted td { color:var(--muted); text-decoration:line-through; } tr.reverted td:last-child { text-decoration:none; }
.anatomy svg { width:100%; height:28px; border:1px solid var(--line); background:var(--free); }
.part-system { fill:var(--system); } .part-recall { fill:var(--recall); } .part-history { fill:var(--history); } .part-reserve { fill:var(--reserve); } .part-free { fill:var(--free); }
ul.legend { list-style:none; display:flex; flex-wrap:wrap; gap:16px; padding:0; margin:6px 0; }
ul.legend li i { display:inline-block; width:10px; height:10px; margin-right:4px; border:1px solid #0002; }
ul.legend li.part-system i { background:var(--system); } ul.legend li.part-recall i { background:var(--recall); } ul.legend li.part-history i { background:var(--history); }
ul.legend li.part-reserve i { background:var(--reserve); } ul.legend li.part-free i { background:var(--free); }
td.clip, td.wrap { overflow-wrap:anywhere; } .badge, button { white-space:nowrap; }
table.diff td.clip { font-family:ui-monospace,monospace; font-size:12px; } tr.fate-archived { background:#fdf1f0; } tr.fate-summarised { background:#fff7ec; } tr.fate-added { background:#eef5ff; }
`;

/** Confirmation before a write; nothing else runs in the page. */
export const STUDIO_JS = `
document.addEventListener('submit', function (event) {
  var form = event.target;
  var question = form && form.getAttribute && form.getAttribute('data-confirm');
  if (question && !window.confirm(question)) event.preventDefault();
});
`;
