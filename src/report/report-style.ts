// report.html's stylesheet: system fonts only (nothing to fetch or embed), readable when
// printed, verdict colours shared by the table, the badges and the waterfall.
export const reportStyle = `
:root { --fail: #c62828; --pass: #2e7d32; --inconclusive: #ef6c00; --muted: #666; --line: #ddd; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; margin: 0; color: #222; background: #fafafa; }
main { max-width: 1400px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 14px; margin: 0 0 4px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12.5px; }
pre { background: #fff; border: 1px solid var(--line); padding: 8px 10px; overflow: auto; max-height: 420px; margin: 4px 0; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; font-weight: 600; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.muted { color: var(--muted); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-weight: 600; font-size: 12px; }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); } .badge.inconclusive { background: var(--inconclusive); }
.badge.hung { background: var(--fail); } .badge.evidence { background: #6a1b9a; } .badge.slowest { background: #455a64; }
.overall { font-size: 15px; padding: 3px 12px; vertical-align: middle; margin-left: 8px; }
.meta { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 4px 16px; margin: 8px 0; }
.meta div span { color: var(--muted); margin-right: 6px; }
.meta code { word-break: break-all; }
tr.check.verdict-fail td:first-child { border-left: 4px solid var(--fail); }
tr.check.verdict-inconclusive td:first-child { border-left: 4px solid var(--inconclusive); }
tr.check.verdict-pass td:first-child { border-left: 4px solid var(--pass); }
details.evidence summary { cursor: pointer; color: #1565c0; margin-top: 2px; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 14px; }
figure.chart-box { margin: 0; background: #fff; border: 1px solid var(--line); padding: 8px; min-width: 0; }
figure.chart-box figcaption { font-size: 12px; color: var(--muted); margin-bottom: 4px; }
.chart { min-height: 220px; width: 100%; }
.chart.empty { display: flex; align-items: center; justify-content: center; color: var(--muted); border: 1px dashed var(--line); }
.marks { position: absolute; inset: 0; pointer-events: none; overflow: hidden; }
.fault-band { position: absolute; top: 0; bottom: 0; border-left: 1px solid; }
.fault-band.never-healed { background-image: repeating-linear-gradient(45deg, transparent 0 6px, rgba(198, 40, 40, 0.12) 6px 12px); }
.fault-label { position: absolute; left: 3px; font-size: 10.5px; white-space: nowrap; color: #7f1d1d; }
.phase-mark { position: absolute; top: 0; bottom: 0; border-left: 1px dashed #888; }
tr.fault-window td:first-child { border-left: 4px solid hsla(0, 85%, 55%, 0.6); }
tr.never-healed { background: #fff3f3; }
section.invocation { background: #fff; border: 1px solid var(--line); padding: 8px 12px; margin: 10px 0; }
section.invocation h3 { display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
table.waterfall td { padding: 2px 6px; font-size: 12.5px; }
td.wf-track { position: relative; width: 40%; min-width: 240px; padding: 0; }
.wf-bar { position: absolute; top: 4px; bottom: 4px; background: #1f77b4; border-radius: 2px; }
tr.span-error .wf-bar { background: var(--fail); }
tr.span-error td { color: var(--fail); }
.wf-bar.wf-open { background: repeating-linear-gradient(45deg, #ff7f0e 0 4px, #ffd8b0 4px 8px); border-radius: 2px 0 0 2px; }
tr.span-open td { font-style: italic; }
.wf-fault { position: absolute; top: 0; bottom: 0; background: hsla(0, 85%, 55%, 0.14); }
.badge.example { background: #00695c; }
section.invocation:target { outline: 3px solid #1565c0; outline-offset: 2px; }
section.why { background: #fff; border: 1px solid var(--line); border-left: 5px solid var(--fail); padding: 4px 16px 10px; margin: 16px 0; }
section.why h2 { margin-top: 8px; }
ol.why-groups { padding-left: 1.4em; margin: 0; }
li.why-group { margin: 10px 0 16px; }
li.why-group:target { outline: 2px solid #1565c0; outline-offset: 4px; }
p.why-sentence { font-weight: 600; margin: 0 0 6px; }
dl.why-facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 4px 0 8px; }
dl.why-facts dt { color: var(--muted); }
dl.why-facts dd { margin: 0; }
ul.why-fault-list { margin: 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 2px 14px; }
.why-leadership { margin: 6px 0; }
.lead-head { display: flex; justify-content: space-between; font-size: 12px; }
.lead-strip { position: relative; height: 22px; background: #f4f4f4; border: 1px solid var(--line); overflow: hidden; }
.lead-strip.lead-faults { height: 16px; border-top: 0; background: #fff; }
.lead-seg, .lead-fault { position: absolute; top: 0; bottom: 0; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; font-size: 11.5px; line-height: 20px; padding: 0 4px; border-right: 1px solid #fff; }
.lead-seg.lead-none { background: repeating-linear-gradient(45deg, #fdecea 0 6px, #f8c9c4 6px 12px); color: var(--fail); font-weight: 600; }
.lead-seg.lead-split { background: #ffe0b2; color: #8a4b00; font-weight: 600; }
.lead-fault { background: hsla(0, 85%, 55%, 0.18); color: #7f1d1d; font-size: 10.5px; line-height: 14px; }
p.lead-words { font-size: 12px; color: var(--muted); margin: 2px 0 0; }
p.why-example { margin: 6px 0 2px; }
pre.why-trace { margin: 2px 0 0; padding: 3px 8px; display: inline-block; }
section.fault-space, section.coverage { margin: 0; }
.fs-scroll { overflow-x: auto; }
table.fault-space-grid { width: auto; min-width: 50%; }
table.fault-space-grid th.fs-group { text-align: center; font-weight: 500; color: var(--muted); }
table.fault-space-grid th.fs-subject-name { background: #f7f7f7; white-space: nowrap; }
td.fs-cell { min-width: 110px; font-size: 12.5px; }
td.fs-met, .fs-key.fs-met { background: #e8f5e9; }
td.fs-unmet, .fs-key.fs-unmet { background: #fff8e1; }
td.fs-never, .fs-key.fs-never { background: repeating-linear-gradient(45deg, #fdecea 0 6px, #f8c9c4 6px 12px); }
td.fs-never { color: var(--fail); font-weight: 600; text-align: center; vertical-align: middle; }
td.fs-na { background: #fafafa; }
.fs-windows { font-weight: 600; }
ul.fs-phases { margin: 2px 0 0; padding-left: 1.1em; }
.fs-idle { color: #8a4b00; }
.fs-key { display: inline-block; width: 12px; height: 12px; border: 1px solid var(--line); vertical-align: -1px; margin-right: 2px; }
table.coverage-files { width: auto; min-width: 60%; }
table.coverage-files tfoot th { text-align: left; }
table.coverage-files tfoot td { font-weight: 600; background: #f7f7f7; }
td.cov-cell { white-space: nowrap; font-variant-numeric: tabular-nums; }
.cov-bar { display: inline-block; width: 90px; height: 9px; background: #eee; border: 1px solid #ccc; vertical-align: middle; margin-right: 6px; }
.cov-bar > span { display: block; height: 100%; }
.cov-bar.cov-high > span { background: var(--pass); } .cov-bar.cov-mid > span { background: var(--inconclusive); } .cov-bar.cov-low > span { background: var(--fail); }
.cov-count { display: inline-block; min-width: 70px; text-align: right; }
table.coverage-unreached td { font-size: 12.5px; padding: 2px 6px; }
tr.unreached.error-path td:first-child { border-left: 4px solid var(--fail); }
.badge.error-path { background: var(--fail); }
footer { margin-top: 32px; font-size: 12px; color: var(--muted); }
`;
