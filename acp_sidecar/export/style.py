"""The export page's CSS: one inline stylesheet (light, dark, print), nothing to fetch; each
``.entry`` is skipped by layout until near the viewport, so huge pages stay cheap.
"""

from __future__ import annotations

import functools

from acp_sidecar.export.highlight import pygments_css

_LIGHT = (
    "--fg:#1f2328;--muted:#59636e;--bg:#ffffff;--panel:#f6f8fa;--border:#d1d9e0;"
    "--accent:#0969da;--ok:#1a7f37;--fail:#cf222e;--run:#9a6700;--signal:#8250df;"
    "--add-bg:#dafbe1;--del-bg:#ffebe9;--hunk-bg:#ddf4ff;--term-bg:#f6f8fa;--term-fg:#1f2328;"
    "--a0:#24292f;--a1:#cf222e;--a2:#116329;--a3:#9a6700;--a4:#0550ae;--a5:#8250df;"
    "--a6:#1b7c83;--a7:#6e7781;--a8:#57606a;--a9:#a40e26;--a10:#1a7f37;--a11:#7d4e00;"
    "--a12:#0969da;--a13:#a475f9;--a14:#3192aa;--a15:#8c959f;"
)
_DARK = (
    "--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--panel:#151b23;--border:#3d444d;"
    "--accent:#4493f8;--ok:#3fb950;--fail:#f85149;--run:#d29922;--signal:#ab7df8;"
    "--add-bg:#12261e;--del-bg:#25171c;--hunk-bg:#121d2f;--term-bg:#010409;--term-fg:#e6edf3;"
    "--a0:#484f58;--a1:#ff7b72;--a2:#3fb950;--a3:#d29922;--a4:#58a6ff;--a5:#bc8cff;"
    "--a6:#39c5cf;--a7:#b1bac4;--a8:#6e7681;--a9:#ffa198;--a10:#56d364;--a11:#e3b341;"
    "--a12:#79c0ff;--a13:#d2a8ff;--a14:#56d4dd;--a15:#ffffff;"
)

_BASE = """
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);line-height:1.5;
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main,body>header{max-width:60rem;margin:0 auto;padding:0 .75rem}
body>header{padding-top:1rem;border-bottom:1px solid var(--border)}
h1{font-size:1.35rem;margin:.25rem 0;overflow-wrap:anywhere}
dl{display:grid;grid-template-columns:max-content 1fr;gap:0 .75rem;margin:.5rem 0;
color:var(--muted)}
dd{margin:0;overflow-wrap:anywhere}
pre,code,.code,.ln,.term-command,.term-cwd,.diff-path,.locations{
font-family:ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace;
font-size:13px}
pre{margin:.25rem 0;padding:.5rem;overflow-x:auto;background:var(--panel);border-radius:6px;
white-space:pre}
:not(pre)>code{background:var(--panel);padding:.1em .3em;border-radius:4px}
a{color:var(--accent)}
table{border-collapse:collapse}
.msg table{display:block;overflow-x:auto}
.msg th,.msg td{border:1px solid var(--border);padding:.2rem .5rem}
.entry{position:relative;margin:.75rem 0;content-visibility:auto;contain-intrinsic-size:auto 6rem}
.entry>time{display:block;color:var(--muted);font-size:12px;font-variant-numeric:tabular-nums}
.msg{overflow-wrap:anywhere}
.msg>:first-child{margin-top:0}.msg>:last-child{margin-bottom:0}
.msg-user{background:var(--panel);border-left:3px solid var(--accent);padding:.5rem .75rem;
border-radius:6px}
.prompt-image{max-width:100%;height:auto;border:1px solid var(--border)}
.typed{white-space:pre-wrap}
.thought{color:var(--muted);font-style:italic}
summary{cursor:pointer;color:var(--muted)}
.note,.clipped{color:var(--muted);font-size:13px}
.clipped{padding:.15rem .5rem;font-style:italic}
.ctl{color:var(--fail)}
.card{border:1px solid var(--border);border-left:4px solid var(--run);border-radius:6px;
padding:.4rem .6rem;background:var(--bg)}
.card[data-status=completed]{border-left-color:var(--ok)}
.card[data-status=failed]{border-left-color:var(--fail)}
.card[data-status=pending]{border-left-color:var(--border)}
.card-head{display:flex;align-items:center;gap:.5rem;min-width:0}
.kind-icon{width:16px;height:16px;flex:none;color:var(--muted)}
.card-title{flex:1;min-width:0;font-weight:600;overflow-wrap:anywhere}
.status,.exit-pill,.badge{flex:none;font-size:12px;padding:0 .45rem;border-radius:1em;
border:1px solid}
.status-completed{color:var(--ok)}.status-failed{color:var(--fail)}
.status-in_progress{color:var(--run)}.status-pending,.status-unknown{color:var(--muted)}
.locations{list-style:none;margin:.2rem 0;padding:0;color:var(--muted);overflow-wrap:anywhere}
.locations li{display:inline;margin-right:.75rem}
.raw-input{color:var(--muted);white-space:pre-wrap;overflow-wrap:anywhere}
.diff{margin:.4rem 0;border:1px solid var(--border);border-radius:6px;overflow:hidden}
.diff-path{padding:.25rem .5rem;background:var(--panel);border-bottom:1px solid var(--border);
overflow-wrap:anywhere}
.badge-new{color:var(--ok);margin-left:.4rem}
.diff>.note,.diff>details>summary{padding:.25rem .5rem}
.diff-lines{width:100%;display:block;overflow-x:auto}
.diff-lines td{padding:0 .4rem;vertical-align:top;white-space:pre}
.diff-lines .ln{color:var(--muted);text-align:right;user-select:none;min-width:3ch}
.diff-lines .code{width:100%}
.diff-lines .code::before{display:inline-block;width:1.2ch;color:var(--muted);content:" "}
.diff-lines .add{background:var(--add-bg)}.diff-lines .add .code::before{content:"+"}
.diff-lines .del{background:var(--del-bg)}.diff-lines .del .code::before{content:"-"}
.diff-lines .hunk{background:var(--hunk-bg);color:var(--muted)}
.terminal{margin:.4rem 0;border:1px solid var(--border);border-radius:6px;background:var(--term-bg);
color:var(--term-fg);padding:.35rem .5rem}
.term-command{font-weight:600;overflow-wrap:anywhere}
.term-command::before{content:"$ ";color:var(--muted)}
.term-cwd{color:var(--muted);overflow-wrap:anywhere}
.terminal pre{background:transparent;padding:.25rem 0;margin:0}
.exit-pill{display:inline-block;margin-top:.25rem}
.exit-ok{color:var(--ok)}.exit-fail{color:var(--fail)}.exit-signal{color:var(--signal)}
.exit-running{color:var(--run)}
.tool-text{margin:.3rem 0;overflow-wrap:anywhere}
.plan{border:1px solid var(--border);border-radius:6px;padding:.4rem .75rem}
.plan h2{font-size:1rem;margin:0}
.plan ol{margin:.25rem 0;padding-left:1.5rem}
.plan-completed{color:var(--muted);text-decoration:line-through}
.plan-in_progress{font-weight:600}
.event{color:var(--muted);font-size:13px;border-left:3px solid var(--border);padding-left:.5rem}
.event-permission{border-left-color:var(--run)}.event-stop{border-left-color:var(--muted)}
.event-gap{border-left-color:var(--fail)}
.notice{border-left:3px solid var(--run);padding:.2rem .5rem}
.notice-warning{border-left-color:var(--signal)}.notice-error{border-left-color:var(--fail)}
.notice p{margin:0}.notice-title{font-weight:600;overflow-wrap:anywhere}
.notice-detail{color:var(--muted);white-space:pre-wrap;overflow-wrap:anywhere}
.compaction{color:var(--muted);border-left:3px solid var(--border);padding-left:.5rem}
.compaction>summary{font-weight:600}
.a-b{font-weight:700}.a-d{opacity:.65}.a-i{font-style:italic}.a-u{text-decoration:underline}
.a-s{text-decoration:line-through}.a-rf{color:var(--term-bg)}.a-rg{background:var(--term-fg)}
"""


def _ansi_palette() -> str:
    return "".join(
        f".a-f{n}{{color:var(--a{n})}}.a-g{n}{{background:var(--a{n})}}" for n in range(16)
    )


_PRINT = """
@media print{
body{font-size:11pt}
main,body>header{max-width:none}
.entry{content-visibility:visible;break-inside:avoid}
.card,.terminal,.diff,.plan{break-inside:avoid}
pre,.diff-lines td{white-space:pre-wrap;overflow-wrap:anywhere}
pre,.msg-user,.diff-path,.terminal{background:none}
details::details-content{display:block;content-visibility:visible}
}
"""


@functools.cache
def page_css() -> str:
    """The whole stylesheet of an export page (see the module invariants)."""
    return (
        f":root{{color-scheme:light dark;{_LIGHT}}}\n"
        f"@media screen and (prefers-color-scheme: dark){{:root{{{_DARK}}}}}\n"
        f"{_BASE}{_ansi_palette()}\n{_PRINT}{pygments_css()}"
    )
